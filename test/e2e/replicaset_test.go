package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestReplicaSetScales: the example replica set boots two guests (VMIs named after the set and
// owned by it) and kubectl shows DESIRED 2 CURRENT 2 READY 2; `kubectl scale` to 1 deletes one;
// a HorizontalPodAutoscaler with minReplicas 2 scales it back up through /scale; deleted with its
// VMIs orphaned and created again, the set adopts them and creates none; paused, the set
// neither replaces nor removes VMIs and says so in ReplicaPaused; resumed at 0 replicas it
// deletes them all.
func TestReplicaSetScales(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmirs-demo.yaml")
	waitReplicaSetRow(t, ns, "demo", "2", "2", "2", 180*time.Second)
	vmis := replicaSetVMIs(t, ns)
	for _, vmi := range vmis {
		ref := metav1.GetControllerOf(&vmi)
		if !strings.HasPrefix(vmi.Name, "demo") || ref == nil || ref.Kind != "VirtualMachineInstanceReplicaSet" || ref.Name != "demo" {
			t.Errorf("VMI %s owned by %+v, want a name starting with demo and the replica set as controller", vmi.Name, ref)
		}
	}

	kubectl(t, "-n", ns, "scale", "vmirs", "demo", "--replicas", "1")
	waitReplicaSetRow(t, ns, "demo", "1", "1", "1", 90*time.Second)
	eventuallyWithin(t, "one VMI left", 90*time.Second, func() error {
		if n := len(replicaSetVMIs(t, ns)); n != 1 {
			return fmt.Errorf("%d VMIs", n)
		}
		return nil
	})

	// The HPA controller raises a target below minReplicas without needing metrics.
	kubectl(t, "-n", ns, "autoscale", "vmirs", "demo", "--min", "2", "--max", "3", "--cpu", "80%")
	eventuallyWithin(t, "the HorizontalPodAutoscaler scales the set to 2", 90*time.Second, func() error {
		out := kubectl(t, "-n", ns, "get", "vmirs", "demo", "-o", "jsonpath={.spec.replicas}")
		if out != "2" {
			return fmt.Errorf("spec.replicas %q", out)
		}
		return nil
	})
	kubectl(t, "-n", ns, "delete", "hpa", "demo")
	waitReplicaSetRow(t, ns, "demo", "2", "2", "2", 180*time.Second)
	recreatedSetAdopts(t, ns)

	kubectl(t, "-n", ns, "patch", "vmirs", "demo", "--type", "merge", "-p", `{"spec":{"paused":true,"replicas":0}}`)
	eventuallyWithin(t, "the ReplicaPaused condition", 30*time.Second, func() error {
		out := kubectl(t, "-n", ns, "get", "vmirs", "demo", "-o", `jsonpath={.status.conditions[?(@.type=="ReplicaPaused")].status}`)
		if out != "True" {
			return fmt.Errorf("ReplicaPaused %q", out)
		}
		return nil
	})
	if n := len(replicaSetVMIs(t, ns)); n == 0 {
		t.Errorf("a paused set deleted its VMIs")
	}
	kubectl(t, "-n", ns, "patch", "vmirs", "demo", "--type", "merge", "-p", `{"spec":{"paused":false}}`)
	eventuallyWithin(t, "no VMI left at 0 replicas", 90*time.Second, func() error {
		if n := len(replicaSetVMIs(t, ns)); n != 0 {
			return fmt.Errorf("%d VMIs", n)
		}
		return nil
	})
	waitReplicaSetRow(t, ns, "demo", "0", "0", "0", 30*time.Second)
}

// recreatedSetAdopts deletes the replica set demo leaving its VMIs, creates it again from what it
// was, and waits for the new set to control the same VMIs, with no VMI more.
func recreatedSetAdopts(t *testing.T, ns string) {
	t.Helper()
	sets := vireo.KubevirtV1().VirtualMachineInstanceReplicaSets(ns)
	saved, err := sets.Get(t.Context(), "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := replicaSetVMIs(t, ns)
	owners := func(check func(vmi *v1.VirtualMachineInstance, ref *metav1.OwnerReference) error) func() error {
		return func() error {
			for _, old := range before {
				vmi, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), old.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if vmi.UID != old.UID {
					return fmt.Errorf("VMI %s was replaced", vmi.Name)
				}
				if err := check(vmi, metav1.GetControllerOf(vmi)); err != nil {
					return fmt.Errorf("VMI %s: %w", vmi.Name, err)
				}
			}
			return nil
		}
	}
	kubectl(t, "-n", ns, "delete", "vmirs", "demo", "--cascade=orphan")
	eventuallyWithin(t, "the VMIs orphaned", 60*time.Second, owners(func(_ *v1.VirtualMachineInstance, ref *metav1.OwnerReference) error {
		if ref != nil {
			return fmt.Errorf("controlled by %s", ref.UID)
		}
		return nil
	}))
	again := &v1.VirtualMachineInstanceReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: saved.Name, Labels: saved.Labels}, Spec: saved.Spec}
	created, err := sets.Create(t.Context(), again, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, "the new set controls the VMIs", 60*time.Second, owners(func(_ *v1.VirtualMachineInstance, ref *metav1.OwnerReference) error {
		if ref == nil || ref.UID != created.UID {
			return fmt.Errorf("controlled by %+v", ref)
		}
		return nil
	}))
	waitReplicaSetRow(t, ns, "demo", "2", "2", "2", 60*time.Second)
	if n := len(replicaSetVMIs(t, ns)); n != len(before) {
		t.Errorf("%d VMIs after the adoption, want the %d adopted", n, len(before))
	}
}

// replicaSetVMIs lists the namespace's VMIs that are not being deleted.
func replicaSetVMIs(t *testing.T, ns string) []v1.VirtualMachineInstance {
	t.Helper()
	list, err := vireo.KubevirtV1().VirtualMachineInstances(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io/vmReplicaSet=demo"})
	if err != nil {
		t.Fatal(err)
	}
	var out []v1.VirtualMachineInstance
	for _, vmi := range list.Items {
		if vmi.DeletionTimestamp == nil {
			out = append(out, vmi)
		}
	}
	return out
}

// waitReplicaSetRow waits until `kubectl get vmirs` shows the set with these DESIRED, CURRENT and READY.
func waitReplicaSetRow(t *testing.T, ns, name, desired, current, ready string, timeout time.Duration) {
	t.Helper()
	waitScaledRow(t, ns, "vmirs", name, desired, current, ready, timeout)
}

// waitScaledRow waits until `kubectl get` of a replica set or pool shows these DESIRED, CURRENT
// and READY.
func waitScaledRow(t *testing.T, ns, resource, name, desired, current, ready string, timeout time.Duration) {
	t.Helper()
	eventuallyWithin(t, fmt.Sprintf("kubectl get %s %s: %s %s %s", resource, name, desired, current, ready), timeout, func() error {
		out, stderr, err := kubectlResult("-n", ns, "get", resource, name, "--no-headers")
		row := strings.Fields(out)
		if err != nil || len(row) != 5 || row[1] != desired || row[2] != current || row[3] != ready {
			return fmt.Errorf("row %q (%v %s)", out, err, stderr)
		}
		return nil
	})
}
