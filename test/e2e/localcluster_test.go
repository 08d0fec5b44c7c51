package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/localcluster"
)

// TestVireoLocalLifecycle covers `vireo-local up` on a running installation (reports it,
// changes nothing, the supervisor included), a failing `up` (stops what it started, names
// the failure, leaves no supervisor) and `down` (stops the supervisor too) followed by `up`
// (keeps the data).
func TestVireoLocalLifecycle(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmiNamed("survivor"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", manifestFile(t, webPod(ns, "survivor-pod", cluster.NodeNames()[0])))
	waitPodsReady(t, ns, "survivor-pod")
	before := pids(t)
	if err := cluster.Up(ctx); err != nil {
		t.Fatalf("second up: %v", err)
	}
	if after := pids(t); !equalPIDs(before, after) {
		t.Fatalf("second up restarted components: %v -> %v", before, after)
	}

	if err := cluster.Down(false); err != nil {
		t.Fatalf("down: %v", err)
	}
	if running := pids(t); len(running) != 0 {
		t.Fatalf("after down still running: %v", running)
	}
	// Nothing of the nodes either: no shim, no container.
	root, _ := filepath.Abs(cluster.Options().Root)
	var left []string
	for _, pid := range processes(t, func(cmdline, _ string) bool { return strings.Contains(cmdline, root) }) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		left = append(left, fmt.Sprintf("%d: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	if len(left) != 0 {
		t.Fatalf("after down %d processes still run from %s:\n%s", len(left), root, strings.Join(left, "\n"))
	}
	if n := podProcesses(t, "survivor-pod"); n != 0 {
		t.Fatalf("after down the Pod's container still runs (%d processes)", n)
	}

	// A broken manifests directory fails `up` after etcd and kube-apiserver started.
	broken := cluster.Options()
	broken.ManifestsDir = t.TempDir()
	upCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := localcluster.New(broken).Up(upCtx)
	if err == nil || !strings.Contains(err.Error(), "rbac") {
		t.Fatalf("up with missing RBAC manifests: %v, want an error naming them", err)
	}
	if running := pids(t); len(running) != 0 {
		t.Fatalf("a failed up left components running: %v", running)
	}

	// An installation made before etcd had a CA of its own migrates on the next up:
	// new certificates, the old ones deleted, the data kept.
	writeOldEtcdPKI(t, cluster.Options().PKI())
	if err := cluster.Up(upCtx); err != nil {
		t.Fatalf("up after down: %v", err)
	}
	if _, ok := pids(t)[localcluster.SupervisorName]; !ok {
		t.Error("no supervisor after up")
	}
	// "Up" means usable: kubectl explain works at once, with a kube-apiserver that has
	// just started and must aggregate Vireo's OpenAPI documents anew.
	for _, kind := range []string{"vmi", "dv"} {
		if out, errOut, err := kubectlResult("explain", kind); err != nil || !strings.Contains(out, "KIND:") {
			t.Errorf("kubectl explain %s right after up: %v\n%s%s", kind, err, out, errOut)
		}
	}
	waitPodsReady(t, ns, "survivor-pod")
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, "survivor", metav1.GetOptions{}); err != nil {
		t.Fatalf("the VMI did not survive down and up (with etcd's certificates migrated to its own CA): %v", err)
	}
	for _, old := range []string{"etcd.crt", "etcd.key", "etcd-client.crt", "etcd-client.key"} {
		if _, err := os.Stat(filepath.Join(cluster.Options().PKI(), old)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("obsolete %s still there after up (stat: %v)", old, err)
		}
	}
}

// pids maps each running component, and the supervisor, to its process id.
func pids(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range append(cluster.Components(), cluster.Supervisor()) {
		if pid, ok := c.PID(); ok {
			out[c.Name] = pid
		}
	}
	return out
}

func equalPIDs(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
