package virt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestKillQEMUsSparesOtherMountNamespaces: launcher Pods all have their layout at the same
// path, so a QEMU of another Pod (another mount namespace, same host process namespace, as on
// vireo-local's nodes) looks like one of ours by its command line; stopping must not kill it.
func TestKillQEMUsSparesOtherMountNamespaces(t *testing.T) {
	skipUnlessProcesses(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to unshare a mount namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare is not installed")
	}
	l := NewLayout(newDaemonDir(t))
	// A stand-in QEMU: a shell named qemu-system-x86_64 whose arguments name the layout's
	// QEMU directory, as libvirt's master-key argument does.
	fake := filepath.Join(t.TempDir(), "qemu-system-x86_64")
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], append(args[1:], fake, "-c", "sleep 60; :", "qemu", "-object", "file="+l.QEMULibDir+"/domain-1-x/master-key.aes")...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd
	}
	other := start("unshare", "-m", "--")
	ours := start("env")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(qemuProcesses(l)) > 0, nil
	}); err != nil {
		t.Fatalf("the stand-in QEMU never showed up: %v", err)
	}
	if err := killQEMUs(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := ours.Wait(); err == nil {
		t.Error("the QEMU in this mount namespace was not killed")
	}
	if processGone(other.Process.Pid) {
		t.Error("the QEMU of another mount namespace was killed")
	}
}
