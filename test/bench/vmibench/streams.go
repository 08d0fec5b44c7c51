package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	// streamsVMI is the VMI the streams phase opens its sessions on.
	streamsVMI = "streams"
	// firstByteRounds sessions per route and kind (cold, warm) time the first byte.
	firstByteRounds = 10
	// echoRounds single characters per block are typed and timed until echoed; each route
	// gets echoBlocks blocks, alternating with the other route's.
	echoRounds, echoBlocks = 50, 2
	// consoleBytes the guest prints per throughput run; throughputRuns runs per route.
	consoleBytes, throughputRuns = 256 << 10, 2
	// vncWindow is how long whole-screen updates are requested per VNC throughput run.
	vncWindow = 3 * time.Second
)

// streamsResult is what the streams phase measured on one running VMI, per route.
type streamsResult struct {
	Node   string                  `json:"node"`
	Routes map[string]routeFigures `json:"routes"`
	// Display is the guest's screen as the VNC server announced it.
	Display string `json:"display"`
}

// routeFigures are one route's figures. First bytes: dial -> websocket open -> "\r" sent ->
// the shell's first byte back; cold with a full TLS handshake, warm with the client's TLS
// session resumed. Echo: one typed character until the guest echoes it, in an open session.
type routeFigures struct {
	FirstByteCold     durations `json:"firstByteCold"`
	FirstByteWarm     durations `json:"firstByteWarm"`
	EchoRoundTrip     durations `json:"echoRoundTrip"`
	ConsoleBytesPerS  numbers   `json:"consoleBytesPerSecond"`
	VNCBytesPerS      numbers   `json:"vncBytesPerSecond"`
	VNCUpdatesPerS    numbers   `json:"vncFullUpdatesPerSecond"`
	consoleRuns, vncs []float64 // raw samples, summarized at the end
	updateRates       []float64
	cold, warm, echo  []time.Duration
}

// streams runs the streams phase: one VMI of the tiny template, its console and VNC timed
// through kube-apiserver's aggregation and straight to its node agent, alternately.
func (e *env) streams(ctx context.Context) (res streamsResult, err error) {
	vmis := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS)
	vmi := e.template.DeepCopy()
	vmi.Name = streamsVMI
	if _, err := vmis.Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		return res, err
	}
	defer func() {
		err = errors.Join(err, e.deleteAndWait(context.WithoutCancel(ctx), streamsVMI))
	}()
	say("streams: waiting for VMI %s to run and its shell to answer", streamsVMI)
	running, err := e.waitRunning(ctx, streamsVMI)
	if err != nil {
		return res, err
	}
	res.Node = running.Status.NodeName
	agg, err := aggregatedRoute(e.cl.cfg, benchNS, streamsVMI)
	if err != nil {
		return res, err
	}
	direct, err := directRoute(ctx, e, res.Node, benchNS, streamsVMI)
	if err != nil {
		return res, err
	}
	if err := waitShell(ctx, agg, e.c.startTimeout); err != nil {
		return res, err
	}
	routes := []streamRoute{agg, direct}
	figs := map[string]*routeFigures{agg.name: {}, direct.name: {}}
	say("streams: first bytes, echo round trips and throughput, alternating aggregated and direct")
	if err := firstBytes(ctx, routes, figs); err != nil {
		return res, err
	}
	if err := echoes(ctx, routes, figs); err != nil {
		return res, err
	}
	for range throughputRuns {
		for _, r := range routes {
			rate, err := consoleThroughput(ctx, r)
			if err != nil {
				return res, err
			}
			f := figs[r.name]
			f.consoleRuns = append(f.consoleRuns, rate)
			bytesPerS, updatesPerS, display, err := vncThroughput(ctx, r)
			if err != nil {
				return res, err
			}
			f.vncs, f.updateRates, res.Display = append(f.vncs, bytesPerS), append(f.updateRates, updatesPerS), display
		}
	}
	res.Routes = map[string]routeFigures{}
	for name, f := range figs {
		f.FirstByteCold, f.FirstByteWarm, f.EchoRoundTrip = summarize(f.cold), summarize(f.warm), summarize(f.echo)
		f.ConsoleBytesPerS, f.VNCBytesPerS, f.VNCUpdatesPerS = summarizeNumbers(f.consoleRuns), summarizeNumbers(f.vncs), summarizeNumbers(f.updateRates)
		res.Routes[name] = *f
	}
	return res, nil
}

// waitRunning polls until VMI name runs.
func (e *env) waitRunning(ctx context.Context, name string) (*v1.VirtualMachineInstance, error) {
	var vmi *v1.VirtualMachineInstance
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, e.c.startTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.Phase == v1.Failed || got.Status.Phase == v1.Succeeded {
			return false, fmt.Errorf("VMI %s ended: %s", name, got.Status.Phase)
		}
		vmi = got
		return got.Status.Phase == v1.Running, nil
	})
	return vmi, err
}

// deleteAndWait deletes VMI name and waits until it is gone.
func (e *env) deleteAndWait(ctx context.Context, name string) error {
	vmis := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS)
	if err := ignoreNotFound(vmis.Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := vmis.Get(ctx, name, metav1.GetOptions{})
		return ignoreNotFound(err) == nil && err != nil, nil
	})
}

// waitShell types into the console until the guest's shell computes 6*7. A read that timed
// out leaves a websocket unusable, so each attempt has a session of its own.
func waitShell(ctx context.Context, r streamRoute, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s, err := r.dial(ctx, "console", nil)
		if err != nil {
			return err
		}
		if _, err := s.Write([]byte("echo A$((6*7))Z\r")); err != nil {
			s.Close()
			return err
		}
		_, err = s.readUntil("A42Z", time.Now().Add(3*time.Second))
		s.Close()
		if err == nil {
			return nil
		}
		if !isTimeout(err) {
			return err
		}
	}
	return fmt.Errorf("the guest's shell did not answer within %s", timeout)
}

// firstBytes times the console's first byte per route, cold and warm, alternating routes.
func firstBytes(ctx context.Context, routes []streamRoute, figs map[string]*routeFigures) error {
	caches := map[string]tls.ClientSessionCache{}
	for _, r := range routes { // a first session fills each route's session cache
		caches[r.name] = tls.NewLRUClientSessionCache(4)
		if _, err := firstByte(ctx, r, caches[r.name]); err != nil {
			return err
		}
	}
	for range firstByteRounds {
		for _, r := range routes {
			cold, err := firstByte(ctx, r, nil)
			if err != nil {
				return err
			}
			warm, err := firstByte(ctx, r, caches[r.name])
			if err != nil {
				return err
			}
			figs[r.name].cold, figs[r.name].warm = append(figs[r.name].cold, cold), append(figs[r.name].warm, warm)
		}
	}
	return nil
}

// firstByte opens a console session, presses Enter and times the first byte back.
func firstByte(ctx context.Context, r streamRoute, cache tls.ClientSessionCache) (time.Duration, error) {
	start := time.Now()
	s, err := r.dial(ctx, "console", cache)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if _, err := s.Write([]byte("\r")); err != nil {
		return 0, err
	}
	s.setDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.Read(make([]byte, 1)); err != nil {
		return 0, fmt.Errorf("%s: first byte: %w", r.name, err)
	}
	return time.Since(start), nil
}

// echoes times single typed characters until echoed, in blocks alternating between routes.
func echoes(ctx context.Context, routes []streamRoute, figs map[string]*routeFigures) error {
	for range echoBlocks {
		for _, r := range routes {
			d, err := echoBlock(ctx, r)
			if err != nil {
				return err
			}
			figs[r.name].echo = append(figs[r.name].echo, d...)
		}
	}
	return nil
}

func echoBlock(ctx context.Context, r streamRoute) ([]time.Duration, error) {
	s, err := r.dial(ctx, "console", nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := settle(s, "B"); err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	var out []time.Duration
	buf := make([]byte, 4096)
	for range echoRounds {
		start := time.Now()
		if _, err := s.Write([]byte("x")); err != nil {
			return nil, err
		}
		s.setDeadline(time.Now().Add(10 * time.Second))
		for echoed := false; !echoed; {
			n, err := s.Read(buf)
			if err != nil {
				return nil, fmt.Errorf("%s: waiting for the echo: %w", r.name, err)
			}
			echoed = strings.Contains(string(buf[:n]), "x")
		}
		out = append(out, time.Since(start))
	}
	// Ctrl-U drops the typed line.
	if _, err := s.Write([]byte{0x15}); err != nil {
		return nil, err
	}
	return out, settle(s, "C")
}

// settle runs a command and waits for its output, so nothing earlier is still on its way.
func settle(s *wsStream, tag string) error {
	if _, err := s.Write([]byte("\recho " + tag + "$((40+2))" + tag + "\r")); err != nil {
		return err
	}
	_, err := s.readUntil(tag+"42"+tag, time.Now().Add(20*time.Second))
	return err
}

// consoleThroughput has the guest print consoleBytes and returns the bytes per second received.
func consoleThroughput(ctx context.Context, r streamRoute) (float64, error) {
	s, err := r.dial(ctx, "console", nil)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	if err := settle(s, "D"); err != nil {
		return 0, fmt.Errorf("%s: %w", r.name, err)
	}
	cmd := fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d; echo; echo E$((40+2))E\r", consoleBytes)
	start := time.Now()
	if _, err := s.Write([]byte(cmd)); err != nil {
		return 0, err
	}
	n, err := s.readUntil("E42E", time.Now().Add(2*time.Minute))
	if err != nil {
		return 0, fmt.Errorf("%s: console output: %w", r.name, err)
	}
	if n < consoleBytes {
		return 0, fmt.Errorf("%s: %d bytes of console output, the guest printed %d", r.name, n, consoleBytes)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// vncThroughput asks for whole-screen raw updates for vncWindow and returns the bytes and
// updates per second received, with the display's size.
func vncThroughput(ctx context.Context, r streamRoute) (bytesPerS, updatesPerS float64, display string, err error) {
	s, err := r.dial(ctx, "vnc", nil)
	if err != nil {
		return 0, 0, "", err
	}
	defer s.Close()
	s.setDeadline(time.Now().Add(vncWindow + 30*time.Second))
	c, err := rfbHandshake(s)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s: %w", r.name, err)
	}
	display = fmt.Sprintf("%dx%d, %d bytes per pixel", c.width, c.height, c.bytesPerPixel)
	start := time.Now()
	total, updates := 0, 0
	for time.Since(start) < vncWindow {
		n, err := c.fullUpdate()
		if err != nil {
			return 0, 0, display, fmt.Errorf("%s: update %d: %w", r.name, updates+1, err)
		}
		total, updates = total+n, updates+1
	}
	elapsed := time.Since(start).Seconds()
	return float64(total) / elapsed, float64(updates) / elapsed, display, nil
}

// isTimeout says whether err is a read deadline passing.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
