package virt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDomainLifecycle(t *testing.T) {
	skipUnlessProcesses(t)
	d := startTestDaemon(t, "")
	c := connectTest(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	events, err := c.Events(ctx)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	const name = "vm1"
	serial := filepath.Join(d.Layout().Dir, "serial.sock")

	dom, err := c.Start(ctx, testDomainXML(name, serial))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if dom.Name != name || dom.ID <= 0 || len(dom.UUID) != 36 {
		t.Errorf("Start returned %+v", dom)
	}
	if ev := waitEvent(t, events, name, EventStarted, 30*time.Second); ev.Reason != ReasonBooted || ev.UUID != dom.UUID {
		t.Errorf("started event %+v, want reason booted and UUID %s", ev, dom.UUID)
	}
	expectState(t, c, name, StateRunning)
	pid := checkQEMU(t, d, name)
	if fi, err := os.Stat(serial); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("serial socket %s: %v", serial, err)
	}

	if err := c.Pause(ctx, name); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if ev := waitEvent(t, events, name, EventSuspended, 30*time.Second); ev.Reason != ReasonUser {
		t.Errorf("suspended event %v, want reason %q", ev, ReasonUser)
	}
	if s, r, err := c.State(ctx, name); err != nil || s != StatePaused || r != ReasonUser {
		t.Errorf("State after Pause = %v, %v, %v; want paused, user", s, r, err)
	}
	if err := c.Resume(ctx, name); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if ev := waitEvent(t, events, name, EventResumed, 30*time.Second); ev.Reason != ReasonUnpaused {
		t.Errorf("resumed event %v, want reason %q", ev, ReasonUnpaused)
	}
	if err := c.Reset(ctx, name); err != nil {
		t.Errorf("Reset: %v", err)
	}
	// SeaBIOS with nothing to boot ignores the ACPI power button: Shutdown succeeds and the
	// domain keeps running until it is destroyed (the next Stopped event says "destroyed").
	if err := c.Shutdown(ctx, name); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	expectState(t, c, name, StateRunning)

	if err := c.Destroy(ctx, name); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if ev := waitEvent(t, events, name, EventStopped, 30*time.Second); ev.Reason != ReasonDestroyed {
		t.Errorf("stopped event after Destroy = %v, want reason destroyed", ev)
	}
	if err := waitGone(ctx, pid, 10*time.Second); err != nil {
		t.Errorf("QEMU %d after Destroy: %v", pid, err)
	}
	waitUndefined(t, c, name)
	if err := c.Destroy(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Destroy of a gone domain: %v, want ErrNotFound", err)
	}

	// QEMU killed under libvirt: a crash the launcher must report with a readable reason.
	if _, err := c.Start(ctx, testDomainXML(name, serial)); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	waitEvent(t, events, name, EventStarted, 30*time.Second)
	pid = checkQEMU(t, d, name)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, events, name, EventStopped, 30*time.Second)
	if ev.Reason != ReasonFailed && ev.Reason != ReasonCrashed {
		t.Errorf("stopped event after kill -9 = %v, want reason failed or crashed", ev)
	}
	if !strings.Contains(ev.Message, "QEMU exited unexpectedly") {
		t.Errorf("message %q does not say QEMU exited unexpectedly", ev.Message)
	}
	t.Logf("after kill -9 of QEMU: %v", ev)
	// libvirt announces the stop before it drops the transient domain: a new start of the
	// same name waits for the old one to be gone.
	waitUndefined(t, c, name)

	// Started paused (startStrategy Paused): libvirt announces the start, then a pause by the
	// user, which is what the launcher reports as the VMI's Paused condition.
	if _, err := c.StartPaused(ctx, testDomainXML(name, serial)); err != nil {
		t.Fatalf("StartPaused: %v", err)
	}
	waitEvent(t, events, name, EventStarted, 30*time.Second)
	if ev := waitEvent(t, events, name, EventSuspended, 30*time.Second); ev.Reason != ReasonUser {
		t.Errorf("suspended event after StartPaused = %v, want reason %q", ev, ReasonUser)
	}
	expectState(t, c, name, StatePaused)
	if err := c.Resume(ctx, name); err != nil {
		t.Fatalf("Resume after StartPaused: %v", err)
	}
	expectState(t, c, name, StateRunning)
	// ACPI reboot: libvirt accepts it (a firmware without a guest ignores the button).
	if err := c.Reboot(ctx, name); err != nil {
		t.Errorf("Reboot: %v", err)
	}
	// QEMU told to quit by a signal it handles: libvirt reports a shutdown, which must not
	// read as a guest power-off.
	if err := syscall.Kill(checkQEMU(t, d, name), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ev = waitEvent(t, events, name, EventStopped, 30*time.Second)
	if !strings.Contains(ev.Message, "signal 15") || strings.Contains(ev.Message, "guest powered off") {
		t.Errorf("stopped event after kill -TERM = %v, want a message quoting QEMU's \"terminating on signal 15\"", ev)
	}
	t.Logf("after kill -TERM of QEMU: %v", ev)
}

// expectState checks the domain's state now.
func expectState(t *testing.T, c *Conn, name string, want State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s, r, err := c.State(ctx, name); err != nil || s != want {
		t.Errorf("State(%s) = %v (%v), %v; want %v", name, s, r, err, want)
	}
}

// waitUndefined polls until libvirt no longer knows the transient domain.
func waitUndefined(t *testing.T, c *Conn, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, _, err := c.State(ctx, name)
		if errors.Is(err, ErrNotFound) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("domain %s still defined after it stopped: State error %v", name, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkQEMU returns the pid of the domain's QEMU and checks whose process it is.
func checkQEMU(t *testing.T, d *Daemon, name string) int {
	t.Helper()
	pid, err := d.QEMUPid(name)
	if err != nil {
		t.Fatalf("QEMUPid: %v", err)
	}
	args, err := processArgs(pid)
	if err != nil || !strings.Contains(strings.Join(args, " "), "guest="+name) {
		t.Errorf("QEMU pid %d command line %q lacks guest=%s (%v)", pid, args, name, err)
	}
	if cred := testCredential(); cred != nil {
		if uid := processUID(t, pid); uid != int(cred.Uid) {
			t.Errorf("QEMU runs as uid %d, want %d", uid, cred.Uid)
		}
	}
	return pid
}

func TestTwoDaemonsSameDomainName(t *testing.T) {
	skipUnlessProcesses(t)
	uuids := []string{"0f6d2d36-7c1f-4b6e-9d1e-2a4a8c3b5e01", "0f6d2d36-7c1f-4b6e-9d1e-2a4a8c3b5e02"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var pids []int
	for _, u := range uuids {
		d := startTestDaemon(t, u)
		c := connectTest(t, d)
		caps, err := c.l.Capabilities()
		if err != nil || !strings.Contains(string(caps), "<uuid>"+u+"</uuid>") {
			t.Errorf("daemon in %s does not report host UUID %s (%v)", d.Layout().Dir, u, err)
		}
		if _, err := c.Start(ctx, testDomainXML("vm", filepath.Join(d.Layout().Dir, "serial.sock"))); err != nil {
			t.Fatalf("Start in %s: %v", d.Layout().Dir, err)
		}
		pid := checkQEMU(t, d, "vm")
		args, _ := processArgs(pid)
		if !strings.Contains(strings.Join(args, " "), d.Layout().Dir+"/") {
			t.Errorf("QEMU %d of %s does not use its daemon's directory: %q", pid, d.Layout().Dir, args)
		}
		pids = append(pids, pid)
	}
	if pids[0] == pids[1] {
		t.Errorf("both daemons report QEMU pid %d", pids[0])
	}
	for _, pid := range pids {
		if processGone(pid) {
			t.Errorf("QEMU %d is not running while both domains should be", pid)
		}
	}
}
