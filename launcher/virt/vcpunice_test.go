package virt

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestIsVCPUThread(t *testing.T) {
	for comm, want := range map[string]bool{
		"CPU 0/TCG": true, "CPU 12/KVM": true, "qemu-system-x86": false, "CPU /TCG": false,
		"CPU 0": false, "CPU 0/": false, "worker": false, "IO mon_iothread": false,
	} {
		if got := isVCPUThread(comm); got != want {
			t.Errorf("isVCPUThread(%q) = %v, want %v", comm, got, want)
		}
	}
}

// TestLowerVCPUPriority: the vCPU threads of a running domain get the niceness asked for;
// QEMU's main thread keeps its own.
func TestLowerVCPUPriority(t *testing.T) {
	skipUnlessProcesses(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := startTestDaemon(t, "")
	c := connectTest(t, d)
	if _, err := c.Start(ctx, testDomainXML("nice", filepath.Join(d.Layout().Dir, "serial.sock"))); err != nil {
		t.Fatal(err)
	}
	n, err := d.LowerVCPUPriority("nice", 7)
	if err != nil || n != 1 {
		t.Fatalf("LowerVCPUPriority = %d, %v; want the one vCPU thread", n, err)
	}
	pid, err := d.QEMUPid("nice")
	if err != nil {
		t.Fatal(err)
	}
	// getpriority returns 20 - nice.
	if prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid); err != nil || 20-prio != 0 {
		t.Errorf("QEMU's main thread: niceness %d (%v), want 0", 20-prio, err)
	}
	tasks, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	vcpus := 0
	for _, task := range tasks {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "comm"))
		if !isVCPUThread(strings.TrimSpace(string(comm))) {
			continue
		}
		vcpus++
		tid, _ := strconv.Atoi(task.Name())
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err != nil || 20-prio != 7 {
			t.Errorf("vCPU thread %d: niceness %d (%v), want 7", tid, 20-prio, err)
		}
	}
	if vcpus != 1 {
		t.Errorf("found %d vCPU threads, want 1", vcpus)
	}
	if err := c.Destroy(ctx, "nice"); err != nil {
		t.Fatal(err)
	}
}
