package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	// portForwardVMI is the VMI the port-forward phase measures.
	portForwardVMI = "portforward"
	// echoPort is where the guest's echo server listens (busybox nc -ll -e cat).
	echoPort = 7
	// bigFileMiB is the size of the file the guest's web server serves for the throughput runs.
	bigFileMiB = 16
	// pfEchoRounds one-byte round trips per block; pfEchoBlocks blocks per route, alternating.
	pfEchoRounds, pfEchoBlocks = 100, 3
	// pfThroughputRuns downloads of the big file per route, alternating.
	pfThroughputRuns = 5
	// agentRounds guestosinfo requests time the guest agent's round trip.
	agentRounds = 20
)

// portForwardUserData starts the guest's echo server and writes the big file before its web
// server starts (the test guest runs a #! user-data script during boot).
var portForwardUserData = fmt.Sprintf("#!/bin/sh\nnc -ll -p %d -e cat </dev/null >/dev/null 2>&1 &\nmkdir -p /www\ndd if=/dev/urandom of=/www/big bs=1M count=%d 2>/dev/null\n",
	echoPort, bigFileMiB)

// portForwardResult is what the phase measured, per route ("aggregated": port-forward through
// kube-apiserver; "direct": a TCP connection straight to the Pod's address).
type portForwardResult struct {
	Node   string                        `json:"node"`
	Routes map[string]portForwardFigures `json:"routes"`
	Agent  durations                     `json:"guestAgentRoundTrip"`
}

type portForwardFigures struct {
	EchoRoundTrip   durations `json:"echoRoundTrip"`
	DownloadBytesPS numbers   `json:"downloadBytesPerSecond"`
	Open            durations `json:"connectionOpen"`
	CPU             routeCPU  `json:"cpuDuringDownloads"`
}

type portForwardSamples struct {
	echo  []time.Duration
	rates []float64
	opens []time.Duration
	cpu   downloadCPU
}

// pfRoute opens one TCP connection to the guest's port.
type pfRoute struct {
	name string
	dial func(ctx context.Context, port int) (io.ReadWriteCloser, error)
}

func (e *env) portForward(ctx context.Context) (res portForwardResult, err error) {
	vmis := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS)
	vmi := e.template.DeepCopy()
	vmi.Name = portForwardVMI
	vmi.Spec.Domain.Devices.Interfaces[0].Ports = nil // every port
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, v1.Disk{Name: "cloudinit",
		DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "cloudinit",
		VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: portForwardUserData}}})
	if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	defer func() {
		err = errors.Join(err, e.deleteAndWait(context.WithoutCancel(ctx), portForwardVMI))
	}()
	say("port-forward: waiting for VMI %s to run and its echo server to answer", portForwardVMI)
	running, err := e.waitRunning(ctx, portForwardVMI)
	if err != nil {
		return res, err
	}
	res.Node = running.Status.NodeName
	podIP := running.Status.Interfaces[0].IP
	agg, err := aggregatedRoute(e.cl.cfg, benchNS, portForwardVMI)
	if err != nil {
		return res, err
	}
	routes := []pfRoute{
		{name: "aggregated", dial: func(ctx context.Context, port int) (io.ReadWriteCloser, error) {
			return agg.dial(ctx, fmt.Sprintf("portforward/%d", port), nil)
		}},
		{name: "direct", dial: func(ctx context.Context, port int) (io.ReadWriteCloser, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", net.JoinHostPort(podIP, fmt.Sprint(port)))
		}},
	}
	if err := waitEcho(ctx, routes[1], e.c.startTimeout); err != nil {
		return res, err
	}
	runs := map[string]*portForwardSamples{"aggregated": {}, "direct": {}}
	say("port-forward: echo round trips and downloads, alternating aggregated and direct")
	for range pfEchoBlocks {
		for _, r := range routes {
			ds, err := echoRoundTrips(ctx, r)
			if err != nil {
				return res, err
			}
			runs[r.name].echo = append(runs[r.name].echo, ds...)
		}
	}
	for range pfThroughputRuns {
		for _, r := range routes {
			d, err := download(ctx, r)
			if err != nil {
				return res, err
			}
			s := runs[r.name]
			s.rates = append(s.rates, float64(d.bytes)/d.elapsed.Seconds())
			s.opens = append(s.opens, d.open)
			s.cpu.add(d.cpu, d.bytes)
		}
	}
	if res.Agent, err = e.agentRoundTrips(ctx); err != nil {
		return res, err
	}
	res.Routes = map[string]portForwardFigures{}
	for name, s := range runs {
		res.Routes[name] = portForwardFigures{EchoRoundTrip: summarize(s.echo), DownloadBytesPS: summarizeNumbers(s.rates),
			Open: summarize(s.opens), CPU: s.cpu.perGB()}
	}
	return res, nil
}

// waitEcho polls until the guest's echo server answers on r.
func waitEcho(ctx context.Context, r pfRoute, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = echoRoundTripsN(ctx, r, 1)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the guest's echo server did not answer on %s: %v (%w)", r.name, last, err)
	}
	return nil
}

func echoRoundTrips(ctx context.Context, r pfRoute) ([]time.Duration, error) {
	return echoRoundTripsN(ctx, r, pfEchoRounds)
}

// echoRoundTripsN opens one connection to the echo port and times n one-byte round trips.
func echoRoundTripsN(ctx context.Context, r pfRoute, n int) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := r.dial(ctx, echoPort)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	var out []time.Duration
	b := make([]byte, 1)
	for i := range n {
		began := time.Now()
		if _, err := c.Write([]byte{byte('a' + i%26)}); err != nil {
			return nil, fmt.Errorf("%s echo: %w", r.name, err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return nil, fmt.Errorf("%s echo: %w", r.name, err)
		}
		out = append(out, time.Since(began))
	}
	return out, nil
}

// downloaded is one download: how long its connection took to open (for the aggregated route: a
// TLS handshake with kube-apiserver, the websocket upgrade, vireo-apiserver's dial of the
// guest), then from the request to the last byte its size, time and the machine's CPU.
type downloaded struct {
	open, elapsed time.Duration
	bytes         int64
	cpu           startCPU
}

// download fetches the guest's big file over one connection.
func download(ctx context.Context, r pfRoute) (downloaded, error) {
	var d downloaded
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	began := time.Now()
	c, err := r.dial(ctx, 80)
	if err != nil {
		return d, err
	}
	d.open = time.Since(began)
	defer c.Close()
	go func() { <-ctx.Done(); c.Close() }()
	before, err := takeCPUSnapshot()
	if err != nil {
		return d, err
	}
	began = time.Now()
	if _, err := io.WriteString(c, "GET /big HTTP/1.0\r\n\r\n"); err != nil {
		return d, err
	}
	d.bytes, err = io.Copy(io.Discard, c)
	d.elapsed = time.Since(began)
	if d.bytes < bigFileMiB<<20 {
		return d, fmt.Errorf("%s download: %d bytes, want more than %d: %v", r.name, d.bytes, bigFileMiB<<20, err)
	}
	after, err := takeCPUSnapshot()
	d.cpu = cpuBetween(before, after)
	return d, err
}

// agentRoundTrips times guestosinfo through kube-apiserver: vireo-apiserver -> node agent ->
// launcher -> the guest agent's guest-get-osinfo and friends.
func (e *env) agentRoundTrips(ctx context.Context) (durations, error) {
	path := fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/virtualmachineinstances/%s/guestosinfo", benchNS, portForwardVMI)
	var ds []time.Duration
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = e.cl.kube.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return durations{}, fmt.Errorf("guestosinfo never answered: %v", last)
	}
	for range agentRounds {
		began := time.Now()
		body, err := e.cl.kube.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return durations{}, err
		}
		if !strings.Contains(string(body), "hostname") {
			return durations{}, fmt.Errorf("guestosinfo answered %q", body)
		}
		ds = append(ds, time.Since(began))
	}
	return summarize(ds), nil
}
