package virt

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSeededDaemonSkipsTheProbe: a daemon started from another daemon's exported
// capabilities answers from them: libvirt keeps the seeded file rather than probing QEMU again
// and writing a new one.
func TestSeededDaemonSkipsTheProbe(t *testing.T) {
	skipUnlessProcesses(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := startTestDaemon(t, "")
	if _, err := connectTest(t, first).DomainCapabilities(ctx, EmulationTCG); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(filepath.Dir(first.Layout().Dir), "seed")
	n, err := first.ExportCapabilities(seed)
	if err != nil || n != 1 {
		t.Fatalf("ExportCapabilities = %d, %v; want 1 file", n, err)
	}

	d, err := StartDaemon(ctx, DaemonConfig{Dir: newDaemonDir(t), Log: newTestLog(t), Credential: testCredential(),
		CapabilitiesSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopAndCheck(t, d) })
	entries, err := os.ReadDir(d.Layout().CapabilitiesDir())
	if err != nil || len(entries) != 1 {
		t.Fatalf("seeded cache: %v, %v; want one file", entries, err)
	}
	cached := filepath.Join(d.Layout().CapabilitiesDir(), entries[0].Name())
	before := stat(t, cached)
	if _, err := connectTest(t, d).DomainCapabilities(ctx, EmulationTCG); err != nil {
		t.Fatal(err)
	}
	if after := stat(t, cached); after != before {
		t.Fatalf("libvirt rewrote the seeded capabilities (%+v -> %+v): it probed QEMU again", before, after)
	}
}

// fileVersion identifies one writing of a file.
type fileVersion struct {
	ino   uint64
	mtime syscall.Timespec
	size  int64
}

func stat(t *testing.T, path string) fileVersion {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fileVersion{ino: st.Ino, mtime: st.Mtim, size: st.Size}
}
