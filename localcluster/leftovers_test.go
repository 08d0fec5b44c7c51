package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestMain lets the test binary stand in for a container shim: run as `<binary> node-shim DIR`
// with VIREO_TEST_FAKE_SHIM set, it only waits to be killed (SIGKILL ends it; a SIGTERM too).
// With VIREO_TEST_CONTAINER_PIDFILE set too, it first starts a "container" below it, in a
// process group of its own (as a real shim does), and writes its pid there.
func TestMain(m *testing.M) {
	if pidFile := os.Getenv("VIREO_TEST_CONTAINER_PIDFILE"); pidFile != "" && os.Getenv("VIREO_TEST_FAKE_SHIM") != "" {
		self, err := os.Executable() // os.Args[0] is the shim's name here
		if err != nil {
			os.Exit(3)
		}
		child := &exec.Cmd{Path: self, Args: []string{"container"}, Env: []string{"VIREO_TEST_FAKE_SHIM=1"},
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
			os.Exit(3)
		}
	}
	if os.Getenv("VIREO_TEST_FAKE_SHIM") != "" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		<-term
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKillLeftoverShims: a shim of this installation's nodes is killed with its process group
// and the container below it, in a process group of its own; one of another installation is
// left alone.
func TestKillLeftoverShims(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "container.pid")
	start := func(dir string, env ...string) *exec.Cmd {
		cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"vireo-local", "node-shim", dir}, Env: append(os.Environ(), append(env, "VIREO_TEST_FAKE_SHIM=1")...),
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	mine := start(filepath.Join(root, "nodes", "n0", "pods", "uid", "containers", "web", "0"), "VIREO_TEST_CONTAINER_PIDFILE="+pidFile)
	theirs := start(filepath.Join(other, "nodes", "n0", "pods", "uid", "containers", "web", "0"))
	// Both are running under their command line before the sweep.
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(cmdline(mine.Process.Pid), "node-shim") && strings.Contains(cmdline(theirs.Process.Pid), "node-shim"), nil
	})
	if err != nil {
		t.Fatal("the fake shims never showed their command lines")
	}
	var container int
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(pidFile)
		container, _ = strconv.Atoi(string(b))
		return container > 0, nil
	})
	if err != nil {
		t.Fatal("the fake shim never started its container")
	}
	t.Cleanup(func() { _ = syscall.Kill(container, syscall.SIGKILL) })
	killed := killLeftoverShims(root)
	if _, ok := killed[mine.Process.Pid]; len(killed) != 1 || !ok {
		t.Fatalf("killed %v, want only pid %d", killed, mine.Process.Pid)
	}
	if uid := podUIDOf(killed[mine.Process.Pid]); uid != "uid" {
		t.Errorf("Pod UID of %s: %q", killed[mine.Process.Pid], uid)
	}
	if err := mine.Wait(); err == nil {
		t.Error("the shim of this installation exited cleanly: it was not killed")
	}
	// The container, adopted by init once its shim died, is reaped once killed.
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(container, 0) != nil, nil
	})
	if err != nil {
		t.Errorf("the container below the killed shim (pid %d) still runs", container)
	}
	if err := theirs.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the shim of another installation is gone: %v", err)
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func TestLogLinesAbout(t *testing.T) {
	logs := t.TempDir()
	if err := os.WriteFile(filepath.Join(logs, "vireo-e2e-1.log"), []byte("a pod-1 started\nother\nb pod-1 deleted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := logLinesAbout(logs, "/x/nodes/n/pods/pod-1/containers/web/0", 1)
	if len(got) != 1 || got[0] != "vireo-e2e-1.log: b pod-1 deleted" {
		t.Errorf("lines %q, want the last one naming pod-1", got)
	}
	if logLinesAbout(logs, "/x/elsewhere", 5) != nil {
		t.Error("lines for a path without a Pod UID")
	}
}

// TestKillNetnsStragglers: a process left in a node's Pod network namespace is killed; one in
// another installation's namespace is not.
func TestKillNetnsStragglers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	mine := Network{Netns: fmt.Sprintf("vlt%d", os.Getpid()%100000)}
	podNetns := PodNetnsPrefix + "-" + mine.NodeName(0) + "-pod-test"
	other := fmt.Sprintf("vlo%d", os.Getpid()%100000)
	for _, ns := range []string{podNetns, other} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v %s", ns, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	start := func(ns string) *exec.Cmd {
		cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0])
		cmd.Env = append(os.Environ(), "VIREO_TEST_FAKE_SHIM=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	straggler, bystander := start(podNetns), start(other)
	// Both are inside their namespaces before the sweep (ip netns exec has exec'd into them).
	inNetns := func(pid int, ns string) bool {
		var a, b syscall.Stat_t
		return syscall.Stat(filepath.Join("/proc", strconv.Itoa(pid), "ns", "net"), &a) == nil &&
			syscall.Stat(filepath.Join("/run/netns", ns), &b) == nil && a.Ino == b.Ino
	}
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return inNetns(straggler.Process.Pid, podNetns) && inNetns(bystander.Process.Pid, other), nil
	})
	if err != nil {
		t.Fatal("the test processes never entered their network namespaces")
	}
	killed := killNetnsStragglers(mine, 1)
	if killed[straggler.Process.Pid] != podNetns || len(killed) != 1 {
		t.Errorf("killed %v, want only %d in %s", killed, straggler.Process.Pid, podNetns)
	}
	if err := straggler.Wait(); err == nil {
		t.Error("the straggler exited cleanly: it was not killed")
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process of another namespace is gone: %v", err)
	}
}
