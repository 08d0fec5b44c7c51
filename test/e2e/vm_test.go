package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// TestVMRunStrategyAlways: the demo VM's VMI runs; when its QEMU is killed, and when its guest
// powers off, the VM starts a new VMI; halting the VM removes it. kubectl shows KubeVirt's columns all along.
func TestVMRunStrategyAlways(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml")
	first := waitPhase(t, ns, "demo", v1.Running, 120*time.Second)
	if ref := metav1.GetControllerOf(first); ref == nil || ref.Kind != "VirtualMachine" || ref.Name != "demo" || first.Labels["vm.kubevirt.io/name"] != "demo" {
		t.Errorf("VMI owner %+v labels %v, want the VM demo", ref, first.Labels)
	}
	waitVMRow(t, ns, "demo", "Running", "True")

	killQEMU(t, ns, "demo", first.UID)
	second := waitVMI(t, ns, "demo", 120*time.Second, "a new VMI Running", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != first.UID && v.Status.Phase == v1.Running
	})
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "demo", metav1.GetOptions{})
	if err != nil || vm.Status.StartFailure != nil || vm.Status.RunStrategy != v1.RunStrategyAlways {
		t.Errorf("VM status after a crash of a VMI that ran: %+v (%v)", vm.Status, err)
	}
	// A guest that powers itself off is started again too.
	con := openConsole(t, ns, "demo")
	con.waitFor(t, guestMarker, 90*time.Second)
	con.send(t, "sync; poweroff -f")
	third := waitVMI(t, ns, "demo", 120*time.Second, "a new VMI Running after the guest powered off", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != second.UID && v.UID != first.UID && v.Status.Phase == v1.Running
	})

	kubectl(t, "-n", ns, "patch", "vm", "demo", "--type", "merge", "-p", `{"spec":{"runStrategy":"Halted"}}`)
	eventuallyWithin(t, "the halted VM's VMI gone", 60*time.Second, func() error { return vmiGone(t, ns, "demo") })
	waitVMRow(t, ns, "demo", "Stopped", "False")
	if second.UID == first.UID || third.UID == second.UID {
		t.Error("the VM did not get a new VMI")
	}
}

// waitVMRow waits until `kubectl get vm` shows the VM with status and ready.
func waitVMRow(t *testing.T, ns, name, status, ready string) {
	t.Helper()
	eventually(t, fmt.Sprintf("kubectl get vm %s: %s, READY %s", name, status, ready), func() error {
		out, stderr, err := kubectlResult("-n", ns, "get", "vm", name, "--no-headers")
		row := strings.Fields(out)
		if err != nil || len(row) != 4 || row[2] != status || row[3] != ready {
			return fmt.Errorf("row %q (%v %s)", out, err, stderr)
		}
		return nil
	})
}

// TestVMActions: start, stop and restart through kube-apiserver at KubeVirt's
// subresources.kubevirt.io paths and at kubevirt.io/v1, with KubeVirt's answers: 202, 409 when
// the run strategy or the VM's state does not allow it, dryRun changing nothing, and 403 for a
// user who may only view; then pause, unpause and softreboot of its VMI (vmiaction_test.go).
func TestVMActions(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml", func(m string) string {
		return strings.Replace(m, "runStrategy: Always", "runStrategy: Manual", 1)
	})
	waitVMRow(t, ns, "demo", "Stopped", "False")
	bind(t, ns, "viewer", "view")
	viewer := userClient(t, "viewer")
	put := func(c versioned.Interface, group, action, body string) (int, string) {
		return putSubresource(t, c, group, ns, "virtualmachines", "demo", action, body)
	}
	eventually(t, "the viewer is refused start", func() error {
		if code, msg := put(viewer, "subresources.kubevirt.io", "start", "{}"); code != 403 {
			return fmt.Errorf("viewer start: %d %s, want 403", code, msg)
		}
		return nil
	})
	if code, msg := put(vireo, "subresources.kubevirt.io", "stop", "{}"); code != 409 || !strings.Contains(msg, "not running") {
		t.Errorf("stop of a stopped Manual VM: %d %q, want 409 not running", code, msg)
	}
	// A dry run, as a user sends it with real kubectl (PUT from stdin).
	cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "kubectl"), "--kubeconfig", cluster.Options().Kubeconfig(), "replace", "--raw",
		"/apis/subresources.kubevirt.io/v1/namespaces/"+ns+"/virtualmachines/demo/start", "-f", "-")
	cmd.Stdin = strings.NewReader(`{"dryRun":["All"]}`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl replace --raw .../start (dry run): %v\n%s", err, out)
	}
	if vm, _ := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "demo", metav1.GetOptions{}); len(vm.Status.StateChangeRequests) != 0 {
		t.Errorf("a dry-run start left requests %+v", vm.Status.StateChangeRequests)
	}
	// Started paused (virtctl start --paused): the VMI runs with its vCPUs stopped until unpaused.
	if code, msg := put(vireo, "subresources.kubevirt.io", "start", `{"paused": true}`); code != 202 {
		t.Fatalf("start paused: %d %s", code, msg)
	}
	first := waitVMI(t, ns, "demo", 120*time.Second, "Running and Paused", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstancePaused)
		return v.Status.Phase == v1.Running && c != nil && c.Status == v1.ConditionTrue
	})
	if s := first.Spec.StartStrategy; s == nil || *s != v1.StartStrategyPaused {
		t.Errorf("VMI of a paused start: startStrategy %v, want Paused", s)
	}
	waitVMRow(t, ns, "demo", "Paused", "False")
	if code, msg := putSubresource(t, vireo, "kubevirt.io", ns, "virtualmachineinstances", "demo", "unpause", "{}"); code != 200 {
		t.Fatalf("unpause of the paused start: %d %s", code, msg)
	}
	waitVMRow(t, ns, "demo", "Running", "True")
	if code, msg := put(vireo, "kubevirt.io", "start", "{}"); code != 409 || !strings.Contains(msg, "already running") {
		t.Errorf("second start: %d %q, want 409 already running", code, msg)
	}
	if code, msg := put(vireo, "kubevirt.io", "restart", "{}"); code != 202 {
		t.Fatalf("restart: %d %s", code, msg)
	}
	waitVMI(t, ns, "demo", 120*time.Second, "a new VMI Running after restart", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != first.UID && v.Status.Phase == v1.Running
	})
	// The VMI actions and the stops below need the booted guest (its shell, its acpid).
	con := openConsole(t, ns, "demo")
	con.waitFor(t, guestMarker, 90*time.Second)
	// The VMI actions, on the same guest.
	checkGuestActions(t, ns, "demo", con)
	if code, msg := put(vireo, "subresources.kubevirt.io", "stop", `{"gracePeriod": -1}`); code != 400 || !strings.Contains(msg, "gracePeriod") {
		t.Errorf("stop with a negative grace period: %d %q, want 400 naming gracePeriod", code, msg)
	}
	// A guest that ignores the power button, stopped as a KubeVirt user would with virtctl:
	// `kubectl vireo stop --force --grace-period 2` (the kubectl plugin). It is destroyed after 2 s,
	// well before the VMI's own 30 s.
	con.send(t, "killall acpid; echo ACPID-$((40+2))-GONE")
	con.waitFor(t, "ACPID-42-GONE", 30*time.Second)
	stopped := waitPhase(t, ns, "demo", v1.Running, 5*time.Second)
	if g := stopped.Spec.TerminationGracePeriodSeconds; g != nil && *g <= 2 {
		t.Fatalf("the VMI's own grace period is %d s: the test needs a longer one", *g)
	}
	if out := kubectlVireo(t, "stop", "demo", "-n", ns, "--force", "--grace-period", "2"); !strings.Contains(out, "scheduled to be stopped") {
		t.Fatalf("kubectl vireo stop demo: %s", out)
	}
	eventuallyWithin(t, "the VM Stopped and its VMI gone within 20 s", 20*time.Second, func() error {
		vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "demo", metav1.GetOptions{})
		if err != nil || vm.Status.PrintableStatus != v1.VirtualMachineStatusStopped {
			return fmt.Errorf("VM %v (%v)", vm.Status.PrintableStatus, err)
		}
		return vmiGone(t, ns, "demo")
	})
	if code, msg := put(vireo, "subresources.kubevirt.io", "restart", `{"gracePeriodSeconds": 3}`); code != 400 {
		t.Errorf("restart with gracePeriodSeconds 3: %d %q, want 400", code, msg)
	}
}
