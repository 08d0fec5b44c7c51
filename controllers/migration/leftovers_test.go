package migration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
)

func TestLeftovers(t *testing.T) {
	failed := func(s *v1.VirtualMachineInstanceMigrationState) { started(s); s.Failed = true }
	ended := func(phase v1.VirtualMachineInstanceMigrationPhase, s *v1.VirtualMachineInstanceMigrationState) *v1.VirtualMachineInstanceMigration {
		m := migrationIn(phase)
		m.Status.MigrationState = s
		return m
	}
	other := func(s *v1.VirtualMachineInstanceMigrationState) {
		// A later migration of the VMI, in flight from the pod m moved the VMI to.
		s.MigrationUID, s.SourcePod, s.TargetPod = "later-uid", targetPod, "virt-launcher-vm1-later"
	}
	beingDeleted := func(p *corev1.Pod) { p.DeletionTimestamp = &now }
	cases := []struct {
		name           string
		m              *v1.VirtualMachineInstanceMigration
		vmi            *v1.VirtualMachineInstance
		target, source *corev1.Pod
		want           []string
	}{
		{name: "failed, its target left", m: ended(v1.MigrationFailed, stateOfM(failed)),
			vmi: vmiWith(stateOfM(failed)), target: target(nil), want: []string{targetPod}},
		{name: "failed, its target being deleted", m: ended(v1.MigrationFailed, stateOfM(failed)),
			vmi: vmiWith(stateOfM(failed)), target: target(beingDeleted)},
		{name: "failed, its target gone", m: ended(v1.MigrationFailed, stateOfM(failed)), vmi: vmiWith(stateOfM(failed))},
		{name: "succeeded, its source left", m: ended(v1.MigrationSucceeded, stateOfM(completed)),
			vmi: vmiWith(stateOfM(completed)), target: target(nil), source: source(), want: []string{sourcePod}},
		{name: "succeeded, the VMI cache before the completion", m: ended(v1.MigrationSucceeded, stateOfM(completed)),
			vmi: vmiWith(stateOfM(started)), target: target(nil), source: source()},
		{name: "succeeded, a later migration from its target in flight", m: ended(v1.MigrationSucceeded, stateOfM(completed)),
			vmi: vmiWith(stateOfM(other)), target: target(nil)},
		{name: "failed, the VMI runs in its target (never the case, but kept)", m: ended(v1.MigrationFailed, stateOfM(failed)),
			vmi: vmiWith(stateOfM(completed)), target: target(nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range leftovers(tc.m, tc.vmi, tc.target, tc.source) {
				got = append(got, p.Name)
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("leftovers %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEndedMigrationDeletesItsLeftTarget: a failed migration whose target Pod's delete was
// lost (the Pod showed up after the migration ended) deletes it on its next sync.
func TestEndedMigrationDeletesItsLeftTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failedState := stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) { started(s); s.Failed = true })
	vmi := vmiWith(failedState)
	m := migrationIn(v1.MigrationFailed)
	m.Status.MigrationState = failedState.DeepCopy()
	left := target(func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}
	})
	f := newFixture(ctx, t, vireofake.NewClientset(vmi, m), kubefake.NewClientset(left))
	f.syncUntil("ns/m", "the left target Pod's deletion", func() bool {
		_, err := f.kube.CoreV1().Pods("ns").Get(ctx, targetPod, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if got := f.migration("m"); got.Status.Phase != v1.MigrationFailed {
		t.Errorf("the ended migration moved to %s", got.Status.Phase)
	}
}
