package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vireo-dev/vireo/localcluster"
)

// TestSupervisorRestartsCrashedProcesses kills kube-apiserver, etcd and a local node with
// SIGKILL: each runs again within 10 s (a new process, one more restart counted), the API
// answers with the objects created before, and the node runs new Pods.
func TestSupervisorRestartsCrashedProcesses(t *testing.T) {
	ns := namespace(t)
	kubectl(t, "-n", ns, "create", "configmap", "before-crashes", "--from-literal=k=v")
	for _, name := range []string{"kube-apiserver", "etcd"} {
		crash(t, name)
		waitForAPI(t)
		if out := kubectl(t, "-n", ns, "get", "configmap", "before-crashes", "-o", "jsonpath={.data.k}"); out != "v" {
			t.Fatalf("after %s crashed, configmap data %q, want v", name, out)
		}
	}

	node := cluster.NodeNames()[0]
	st := crash(t, node)
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && nodeIsReady(n), nil
	})
	if err != nil {
		t.Fatalf("node %s not Ready after its restart", node)
	}
	kubectl(t, "apply", "-f", manifestFile(t, webPod(ns, "after-crash", node)))
	waitPodsReady(t, ns, "after-crash")

	// `vireo-local status` (the CLI, finding the installation's network from its run
	// directory) shows the node running, with its restart.
	o := cluster.Options()
	out, err := exec.Command(filepath.Join(o.BinDir, "vireo-local"), "status", "--root", o.Root, "--bin-dir", o.BinDir).CombinedOutput()
	if err != nil {
		t.Fatalf("vireo-local status: %v\n%s", err, out)
	}
	want := fmt.Sprintf("running  pid %-8d up ", st.PID)
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, node+" ") {
			line = l
		}
	}
	if !strings.Contains(line, want) || !strings.Contains(line, fmt.Sprintf("restarts %-3d", st.Restarts)) {
		t.Errorf("status line of %s: %q, want it running as pid %d with %d restarts; status:\n%s", node, line, st.PID, st.Restarts, out)
	}
	if !strings.Contains(string(out), localcluster.SupervisorName+" ") || !strings.Contains(string(out), "APIService") {
		t.Errorf("status lacks the supervisor's or the APIServices' lines:\n%s", out)
	}
}

// crash kills component name with SIGKILL and waits (10 s at most) until the supervisor runs it
// again, as a new process with a restart counted (exactly one more). It returns the new status.
func crash(t *testing.T, name string) localcluster.ComponentStatus {
	t.Helper()
	before, err := cluster.ComponentStatus(name)
	if err != nil || !before.Running {
		t.Fatalf("%s before the crash: %+v, %v; want it running", name, before, err)
	}
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("killing %s (pid %d): %v", name, before.PID, err)
	}
	killed := time.Now()
	var after localcluster.ComponentStatus
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		s, err := cluster.ComponentStatus(name)
		after = s
		// The supervisor records the restart just after starting the process: wait for both.
		return err == nil && s.Running && s.PID != before.PID && s.Restarts > before.Restarts, nil
	})
	if err != nil {
		comp, _ := cluster.Component(name)
		t.Fatalf("%s not running again within 10 s of SIGKILL: %+v\nsupervisor log ends with:\n%s\n%s log ends with:\n%s",
			name, after, cluster.Supervisor().LogTail(10), name, comp.LogTail(10))
	}
	t.Logf("%s: pid %d killed, pid %d running %s later", name, before.PID, after.PID, time.Since(killed).Round(time.Millisecond))
	if after.Restarts != before.Restarts+1 {
		t.Errorf("%s: %d restarts after the crash, %d before; want one more", name, after.Restarts, before.Restarts)
	}
	return after
}

// waitForAPI waits until kubectl gets answers again.
func waitForAPI(t *testing.T) {
	t.Helper()
	var errOut string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		var err error
		_, errOut, err = kubectlResult("get", "ns")
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("kubectl get ns failing 60 s after the restart: %s", errOut)
	}
}
