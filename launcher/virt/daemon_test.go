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

func TestDaemonStartStop(t *testing.T) {
	skipUnlessProcesses(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := StartDaemon(ctx, DaemonConfig{Dir: newDaemonDir(t), Log: newTestLog(t), Credential: testCredential()})
	if err != nil {
		t.Fatalf("StartDaemon: %v", err)
	}
	t.Logf("libvirtd ready after %s", d.StartupDuration())
	if cred := testCredential(); cred != nil {
		if uid := processUID(t, d.Pid()); uid != int(cred.Uid) {
			t.Errorf("libvirtd runs as uid %d, want %d", uid, cred.Uid)
		}
	}
	fi, err := os.Stat(d.Layout().Socket)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket %s: mode %v, %v; want 0700", d.Layout().Socket, fi.Mode().Perm(), err)
	}
	conf, err := os.ReadFile(d.Layout().LibvirtdConf())
	if err != nil || !strings.Contains(string(conf), d.HostUUID()) {
		t.Errorf("libvirtd.conf lacks host UUID %s: %v", d.HostUUID(), err)
	}
	if d2, err := StartDaemon(ctx, DaemonConfig{Dir: d.Layout().Dir, Credential: testCredential()}); err == nil {
		_ = d2.Stop(ctx)
		t.Error("a second daemon started on a directory whose daemon runs")
	} else if !strings.Contains(err.Error(), "already serves") {
		t.Errorf("second daemon on the same directory: %v, want \"already serves\"", err)
	}
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if doms, err := c.Domains(ctx); err != nil || len(doms) != 0 {
		t.Errorf("Domains of a fresh daemon = %v, %v", doms, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	stopAndCheck(t, d)
	select {
	case <-d.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if !errors.Is(d.Err(), ErrDaemonStopped) {
		t.Errorf("Err after Stop = %v, want ErrDaemonStopped", d.Err())
	}
	if _, err := d.Connect(ctx); !errors.Is(err, ErrDaemonStopped) {
		t.Errorf("Connect after Stop = %v, want ErrDaemonStopped", err)
	} else {
		t.Logf("Connect after Stop: %v", err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestDaemonKilledUnderLauncher(t *testing.T) {
	skipUnlessProcesses(t)
	d := startTestDaemon(t, "")
	c := connectTest(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Start(ctx, testDomainXML("vm", filepath.Join(d.Layout().Dir, "serial.sock"))); err != nil {
		t.Fatalf("Start: %v", err)
	}
	qemu := checkQEMU(t, d, "vm")

	if err := syscall.Kill(d.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after libvirtd was killed")
	}
	var exit *ExitError
	if !errors.As(d.Err(), &exit) || !strings.Contains(exit.Status, "signal 9") {
		t.Fatalf("Err = %v, want an ExitError naming signal 9", d.Err())
	}
	t.Logf("Err: %v", d.Err())
	select {
	case <-c.Disconnected():
	case <-ctx.Done():
		t.Fatal("connection not reported lost")
	}
	if _, _, err := c.State(ctx, "vm"); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("State on a dead daemon = %v, want ErrConnectionLost", err)
	}
	if _, err := d.Connect(ctx); err == nil || !strings.Contains(err.Error(), "exited unexpectedly") {
		t.Errorf("Connect to a dead daemon = %v, want an error saying it exited unexpectedly", err)
	}
	// QEMU outlives libvirtd; Stop (in the cleanup) must still remove it.
	if processGone(qemu) {
		t.Errorf("QEMU %d died with libvirtd; expected it to outlive it", qemu)
	}
}
