package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/evacuation"
)

// TestDrainLiveMigrates: `kubectl drain` of the node of a VM whose evictionStrategy is
// LiveMigrate moves its VMI to the other node instead of shutting it down (the same VMI, its
// guest still running), and the drain completes. The eviction of the launcher Pod is held by
// the VMI's PodDisruptionBudget until the migration vireo-controller started on the cordon has
// moved it. Only launcher Pods are drained: vireo-local's single replicas of vireo-apiserver
// and vireo-controller have budgets of their own.
func TestDrainLiveMigrates(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml", func(m string) string {
		return strings.Replace(m, "      domain:\n", "      evictionStrategy: LiveMigrate\n      domain:\n", 1)
	})
	vmi := waitVMI(t, ns, "demo", 2*time.Minute, "Running and live-migratable", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && condition(v, v1.VirtualMachineInstanceIsMigratable) == v1.ConditionTrue
	})
	node := vmi.Status.NodeName
	eventually(t, "the VMI's PodDisruptionBudget", func() error {
		_, err := kube.PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), evacuation.BudgetName(vmi), metav1.GetOptions{})
		return err
	})
	t.Cleanup(func() {
		if _, stderr, err := kubectlResult("uncordon", node); err != nil {
			t.Errorf("kubectl uncordon %s: %v\n%s", node, err, stderr)
		}
	})
	con, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "demo", "console"))
	if err != nil {
		t.Fatal(err)
	}
	echo42(t, con)

	out, stderr, err := kubectlResult("drain", node, "--pod-selector=kubevirt.io=virt-launcher", "--ignore-daemonsets",
		"--delete-emptydir-data", "--timeout=5m")
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s\n%s", node, err, out, stderr)
	}
	after := waitPhase(t, ns, "demo", v1.Running, 10*time.Second)
	if after.UID != vmi.UID || after.Status.NodeName == node || after.Status.NodeName == "" {
		t.Errorf("after the drain: VMI %s on %s, want VMI %s on another node than %s", after.UID, after.Status.NodeName, vmi.UID, node)
	}
	migrations, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(migrations.Items) != 1 {
		t.Fatalf("migrations after the drain: %v (%v)", migrations, err)
	}
	m := migrations.Items[0]
	if !strings.HasPrefix(m.Name, "kubevirt-evacuation-") || m.Annotations[v1.EvacuationMigrationAnnotation] != node || m.Status.Phase != v1.MigrationSucceeded {
		t.Errorf("the evacuation migration: %s %v %s", m.Name, m.Annotations, m.Status.Phase)
	}
	// The guest was not restarted: the old console session says it migrated, a new one answers.
	if text := con.closeText(t, 30*time.Second); !strings.Contains(text, "migrated") {
		t.Errorf("the console session ended with %q", text)
	}
	moved, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "demo", "console"))
	if err != nil {
		t.Fatal(err)
	}
	echo42(t, moved)
}
