package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

// probeKind names a probe in events, as a kubelet does.
type probeKind string

const (
	startupProbe   probeKind = "Startup"
	livenessProbe  probeKind = "Liveness"
	readinessProbe probeKind = "Readiness"
)

// probeRun runs one container run's probes until ctx ends (the run exited): the startup
// probe gates the other two; liveness failures kill the run, which the restart policy then
// restarts; readiness sets the container's Ready, which the Pod's Ready and its Services'
// endpoints follow.
func (w *podWorker) probeRun(ctx context.Context, c *corev1.Container, dir string) {
	if c.StartupProbe != nil {
		if !w.probeLoop(ctx, c, dir, startupProbe, c.StartupProbe, func(ok bool) bool { return !ok }) {
			return
		}
		w.change(func() {
			if r := w.runs[c.Name]; r.dir == dir {
				r.obs.Started = true
				r.obs.Ready = c.ReadinessProbe == nil
			}
		})
	}
	if c.LivenessProbe != nil {
		go w.probeLoop(ctx, c, dir, livenessProbe, c.LivenessProbe, func(bool) bool { return true })
	}
	if c.ReadinessProbe != nil {
		w.probeLoop(ctx, c, dir, readinessProbe, c.ReadinessProbe, func(ready bool) bool {
			w.change(func() {
				if r := w.runs[c.Name]; r.dir == dir {
					r.obs.Ready = ready
				}
			})
			return true
		})
	}
}

// probeLoop probes every period after the initial delay, turning results into verdicts with
// the success and failure thresholds; verdict is told each change and says whether to go on.
// A startup or liveness probe that fails failureThreshold times kills the run. It returns
// true when the loop ended by a verdict (not by the run's end).
func (w *podWorker) probeLoop(ctx context.Context, c *corev1.Container, dir string, kind probeKind, p *corev1.Probe, verdict func(bool) bool) bool {
	period := seconds(p.PeriodSeconds, 10)
	if !sleepCtx(ctx, time.Duration(p.InitialDelaySeconds)*time.Second) {
		return false
	}
	successes, failures := 0, 0
	state := (*bool)(nil)
	for {
		err := w.probeOnce(ctx, c, dir, p)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
			w.event(corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %v", kind, err)
		}
		switch {
		case err == nil && successes >= threshold(p.SuccessThreshold, 1) && (state == nil || !*state):
			ok := true
			state = &ok
			if !verdict(true) {
				return true
			}
		case err != nil && failures >= threshold(p.FailureThreshold, 3) && (state == nil || *state):
			bad := false
			state = &bad
			if kind != readinessProbe {
				w.event(corev1.EventTypeNormal, "Killing", "Container %s failed %s probe, will be restarted", c.Name, kind)
				go stopContainers([]string{dir}, w.probeGrace(p))
				return false
			}
			if !verdict(false) {
				return true
			}
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

// probeOnce runs one probe with its timeout: exec in the container, an HTTP GET or a TCP
// connection to the Pod's address (or the probe's host).
func (w *podWorker) probeOnce(ctx context.Context, c *corev1.Container, dir string, p *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, seconds(p.TimeoutSeconds, 1))
	defer cancel()
	switch {
	case p.Exec != nil:
		var out bytes.Buffer
		code, err := container.Exec(ctx, w.p.cfg.Self, dir, container.ExecRequest{Command: w.execCommand(c.Name, p.Exec.Command), Stdout: &out, Stderr: &out})
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("command %v exited with %d: %s", p.Exec.Command, code, bytes.TrimSpace(out.Bytes()))
		}
		return nil
	case p.HTTPGet != nil:
		return w.probeHTTP(ctx, c, p.HTTPGet)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return err
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(w.probeHost(p.TCPSocket.Host), strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return fmt.Errorf("this probe type is not supported on vireo-local nodes (exec, httpGet and tcpSocket are)")
}

func (w *podWorker) probeHTTP(ctx context.Context, c *corev1.Container, g *corev1.HTTPGetAction) error {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return err
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := scheme + "://" + net.JoinHostPort(w.probeHost(g.Host), strconv.Itoa(port)) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

// probeClient sends every HTTP probe: like a kubelet's, it does not verify the container's
// certificate and keeps no connection open between probes.
var probeClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kubelet probe semantics
	DisableKeepAlives: true,
}}

func (w *podWorker) probeHost(host string) string {
	if host != "" {
		return host
	}
	if ips := w.podIPs(); len(ips) > 0 {
		return ips[0]
	}
	return w.p.cfg.Address.String()
}

// probeGrace is how long a container failing its liveness probe has to stop: the probe's
// terminationGracePeriodSeconds, else the Pod's.
func (w *podWorker) probeGrace(p *corev1.Probe) time.Duration {
	if p.TerminationGracePeriodSeconds != nil {
		return time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
	}
	if g := w.snapshot().Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

// resolvePort is a probe's port: a number, or the name of one of the container's ports.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}

func seconds(v int32, def int) time.Duration {
	if v <= 0 {
		return time.Duration(def) * time.Second
	}
	return time.Duration(v) * time.Second
}

// threshold is a probe's threshold, def when unset.
func threshold(v int32, def int) int {
	if v <= 0 {
		return def
	}
	return int(v)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
