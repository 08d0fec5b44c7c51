package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

// TestPoolScalesAndUpdates: the example pool runs two VMs, pool-demo-0 and pool-demo-1, owned by
// it; `kubectl scale` to 1 removes the highest index; a change of the template updates the VM
// left and restarts its guest on the new revision. Deleted with its VMs orphaned and created
// again, the pool adopts its VM, whose guest keeps running.
func TestPoolScalesAndUpdates(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmpool-demo.yaml")
	waitScaledRow(t, ns, "vmpool", "pool-demo", "2", "2", "2", 180*time.Second)
	for _, name := range []string{"pool-demo-0", "pool-demo-1"} {
		vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), name, metav1.GetOptions{})
		if ref := metav1.GetControllerOf(vm); err != nil || ref == nil || ref.Kind != "VirtualMachinePool" || ref.Name != "pool-demo" {
			t.Fatalf("VM %s: %v, owner %+v", name, err, ref)
		}
	}

	kubectl(t, "-n", ns, "scale", "vmpool", "pool-demo", "--replicas", "1")
	eventuallyWithin(t, "pool-demo-1 removed", 60*time.Second, func() error {
		if _, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "pool-demo-1", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	waitScaledRow(t, ns, "vmpool", "pool-demo", "1", "1", "1", 60*time.Second)

	before := waitPhase(t, ns, "pool-demo-0", v1.Running, 10*time.Second)
	kubectl(t, "-n", ns, "patch", "vmpool", "pool-demo", "--type", "merge", "-p",
		`{"spec":{"virtualMachineTemplate":{"spec":{"template":{"metadata":{"annotations":{"e2e.vireo.dev/revision":"2"}}}}}}}`)
	after := waitVMI(t, ns, "pool-demo-0", 180*time.Second, "a new VMI of the new template Running", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != before.UID && v.Status.Phase == v1.Running && v.Annotations["e2e.vireo.dev/revision"] == "2"
	})
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "pool-demo-0", metav1.GetOptions{})
	if err != nil || vm.Labels[v1beta1.RevisionLabel] == "" || vm.Labels[v1beta1.RevisionLabel] != after.Labels[v1beta1.RevisionLabel] ||
		vm.Labels[v1beta1.RevisionLabel] == before.Labels[v1beta1.RevisionLabel] {
		t.Errorf("revisions: VM %q, new VMI %q, old VMI %q (%v)", vm.Labels[v1beta1.RevisionLabel], after.Labels[v1beta1.RevisionLabel],
			before.Labels[v1beta1.RevisionLabel], err)
	}
	recreatedPoolAdopts(t, ns, vm, after)
}

// recreatedPoolAdopts deletes the pool leaving its VM vm (whose guest runs as vmi), creates the
// pool again from what it was, and waits for the new pool to control the same VM, its guest
// untouched.
func recreatedPoolAdopts(t *testing.T, ns string, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) {
	t.Helper()
	saved, err := vireo.PoolV1beta1().VirtualMachinePools(ns).Get(t.Context(), "pool-demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "delete", "vmpool", "pool-demo", "--cascade=orphan")
	eventuallyWithin(t, "the VM orphaned", 60*time.Second, func() error {
		got, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), vm.Name, metav1.GetOptions{})
		if err != nil || metav1.GetControllerOf(got) != nil {
			return fmt.Errorf("owners %+v (%v)", got.OwnerReferences, err)
		}
		return nil
	})
	again := &v1beta1.VirtualMachinePool{ObjectMeta: metav1.ObjectMeta{Name: saved.Name, Labels: saved.Labels}, Spec: saved.Spec}
	created, err := vireo.PoolV1beta1().VirtualMachinePools(ns).Create(t.Context(), again, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, "the new pool controls the VM", 60*time.Second, func() error {
		got, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), vm.Name, metav1.GetOptions{})
		if ref := metav1.GetControllerOf(got); err != nil || ref == nil || ref.UID != created.UID || got.UID != vm.UID {
			return fmt.Errorf("VM %s: owner %+v (%v)", got.UID, ref, err)
		}
		return nil
	})
	waitScaledRow(t, ns, "vmpool", "pool-demo", "1", "1", "1", 60*time.Second)
	if got, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), vmi.Name, metav1.GetOptions{}); err != nil || got.UID != vmi.UID {
		t.Errorf("the adopted VM's guest was restarted (%v)", err)
	}
}
