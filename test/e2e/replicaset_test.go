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
// a HorizontalPodAutoscaler with minReplicas 2 scales it back up through /scale; paused, the set
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
