package virt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testUID is the user the tests run libvirtd as when they run as root, like a launcher Pod.
const testUID = 107

// testLog forwards daemon output to t.Log while the test runs and drops it afterwards
// (goroutines may still write while the test's cleanups run).
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func newTestLog(t testing.TB) *testLog {
	l := &testLog{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// testCredential runs the daemon as uid/gid 107 when the test runs as root.
func testCredential() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: testUID, Gid: testUID}
}

func skipUnlessProcesses(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts libvirtd and QEMU; skipped with -short")
	}
}

// newDaemonDir returns a short, not yet existing daemon directory in a temporary directory
// that the daemon's user can traverse, removed when the test ends.
func newDaemonDir(t testing.TB) string {
	t.Helper()
	base, err := os.MkdirTemp("", "vv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("remove %s: %v", base, err)
		}
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(base, "d")
}

// startTestDaemon starts a daemon in a fresh directory and stops it when the test ends,
// checking that it left no process and no socket behind.
func startTestDaemon(t testing.TB, hostUUID string) *Daemon {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := StartDaemon(ctx, DaemonConfig{Dir: newDaemonDir(t), HostUUID: hostUUID,
		Log: newTestLog(t), Credential: testCredential()})
	if err != nil {
		t.Fatalf("StartDaemon: %v", err)
	}
	t.Cleanup(func() { stopAndCheck(t, d) })
	return d
}

// stopAndCheck stops d and fails the test if libvirtd, a QEMU of d or d's socket survives.
func stopAndCheck(t testing.TB, d *Daemon) {
	t.Helper()
	qemus := qemuProcesses(d.Layout())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for _, pid := range append([]int{d.Pid()}, qemus...) {
		if err := waitGone(ctx, pid, 10*time.Second); err != nil {
			t.Errorf("process %d after Stop: %v", pid, err)
		}
	}
	if left := qemuProcesses(d.Layout()); len(left) > 0 {
		t.Errorf("QEMU processes left after Stop: %v", left)
	}
	for _, p := range []string{d.Layout().Socket, d.Layout().AdminSocket} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("socket %s left after Stop", p)
		}
	}
}

func connectTest(t testing.TB, d *Daemon) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testDomainXML is a minimal TCG domain with no disk: SeaBIOS finds nothing to boot and
// idles. Its serial port is a unix socket at serial.
func testDomainXML(name, serial string) string {
	return fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <serial type='unix'><source mode='bind' path='%s'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>`, name, serial)
}

// waitEvent reads events until one of kind for domain arrives, failing after limit.
func waitEvent(t testing.TB, ch <-chan Event, domain string, kind EventKind, limit time.Duration) Event {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var seen []string
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("event channel closed waiting for %s of %s; seen: %v", kind, domain, seen)
			}
			seen = append(seen, ev.String())
			if ev.Domain == domain && ev.Kind == kind {
				return ev
			}
		case <-deadline.C:
			t.Fatalf("no %s event of %s within %s; seen: %v", kind, domain, limit, seen)
		}
	}
}

// processUID returns the real uid of pid.
func processUID(t testing.TB, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			var uid int
			if _, err := fmt.Sscan(f[1], &uid); err == nil {
				return uid
			}
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// chownTestUser gives path to the daemons' user when the test runs as root.
func chownTestUser(t testing.TB, path string) {
	t.Helper()
	if c := testCredential(); c != nil {
		if err := os.Chown(path, int(c.Uid), int(c.Gid)); err != nil {
			t.Fatal(err)
		}
	}
}
