package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestMain lets the test binary stand in for a process left behind in a network namespace: run
// with VIREO_TEST_STRAGGLER set, it only waits to be killed (SIGKILL ends it; a SIGTERM too).
func TestMain(m *testing.M) {
	if os.Getenv("VIREO_TEST_STRAGGLER") != "" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		<-term
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKillNetnsStragglers: a process left in a node's network namespace is killed; one in
// another installation's namespace is not.
func TestKillNetnsStragglers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	mine := Network{Netns: fmt.Sprintf("vlt%d", os.Getpid()%100000)}
	nodeNetns := mine.NodeName(0)
	other := fmt.Sprintf("vlo%d", os.Getpid()%100000)
	for _, ns := range []string{nodeNetns, other} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v %s", ns, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	start := func(ns string) *exec.Cmd {
		cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0])
		cmd.Env = append(os.Environ(), "VIREO_TEST_STRAGGLER=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	straggler, bystander := start(nodeNetns), start(other)
	// Both are inside their namespaces before the sweep (ip netns exec has exec'd into them).
	inNetns := func(pid int, ns string) bool {
		var a, b syscall.Stat_t
		return syscall.Stat(filepath.Join("/proc", strconv.Itoa(pid), "ns", "net"), &a) == nil &&
			syscall.Stat(filepath.Join("/run/netns", ns), &b) == nil && a.Ino == b.Ino
	}
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return inNetns(straggler.Process.Pid, nodeNetns) && inNetns(bystander.Process.Pid, other), nil
	})
	if err != nil {
		t.Fatal("the test processes never entered their network namespaces")
	}
	killed := killNetnsStragglers(mine, 1)
	if killed[straggler.Process.Pid] != nodeNetns || len(killed) != 1 {
		t.Errorf("killed %v, want only %d in %s", killed, straggler.Process.Pid, nodeNetns)
	}
	if err := straggler.Wait(); err == nil {
		t.Error("the straggler exited cleanly: it was not killed")
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process of another namespace is gone: %v", err)
	}
}
