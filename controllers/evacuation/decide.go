package evacuation

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/migrationretry"
)

// KubeVirt's names of what this controller creates.
const (
	// DisruptionBudgetPrefix starts the name of a VMI's PodDisruptionBudget; the VMI's UID
	// follows.
	DisruptionBudgetPrefix = "kubevirt-disruption-budget-"
	// MigrationGenerateName prefixes the names of evacuation migrations.
	MigrationGenerateName = "kubevirt-evacuation-"
)

// Strategy is vmi's effective eviction strategy: its spec.evictionStrategy, None when unset
// (Vireo's cluster settings have no evictionStrategy to fall back to).
func Strategy(vmi *v1.VirtualMachineInstance) v1.EvictionStrategy {
	if vmi.Spec.EvictionStrategy == nil || *vmi.Spec.EvictionStrategy == "" {
		return v1.EvictionStrategyNone
	}
	return *vmi.Spec.EvictionStrategy
}

// alive reports whether vmi has not ended and is not being deleted.
func alive(vmi *v1.VirtualMachineInstance) bool {
	return vmi.DeletionTimestamp == nil && vmi.Status.Phase != v1.Succeeded && vmi.Status.Phase != v1.Failed
}

// NeedsBudget reports whether an eviction must not take vmi's guest down: the VMI is alive and
// its strategy is LiveMigrate or External, or LiveMigrateIfPossible while it is live-migratable.
// Such a VMI gets a PodDisruptionBudget that refuses every eviction of its launcher Pods.
func NeedsBudget(vmi *v1.VirtualMachineInstance) bool {
	if !alive(vmi) {
		return false
	}
	switch Strategy(vmi) {
	case v1.EvictionStrategyLiveMigrate, v1.EvictionStrategyExternal:
		return true
	case v1.EvictionStrategyLiveMigrateIfPossible:
		return migrationretry.LiveMigratable(vmi)
	}
	return false
}

// migratesOnEviction reports whether vmi is to be live-migrated off a drained node: its
// strategy is LiveMigrate or LiveMigrateIfPossible, it runs, and it is live-migratable (a
// migration of any other VMI would be refused). A LiveMigrate VMI that is not live-migratable
// stays, its eviction blocked, until it ends or its node is uncordoned (as in KubeVirt).
func migratesOnEviction(vmi *v1.VirtualMachineInstance) bool {
	s := Strategy(vmi)
	if s != v1.EvictionStrategyLiveMigrate && s != v1.EvictionStrategyLiveMigrateIfPossible {
		return false
	}
	return alive(vmi) && vmi.Status.Phase == v1.Running && vmi.Status.NodeName != "" && migrationretry.LiveMigratable(vmi)
}

// BudgetName is the name of vmi's PodDisruptionBudget.
func BudgetName(vmi *v1.VirtualMachineInstance) string {
	return DisruptionBudgetPrefix + string(vmi.UID)
}

// Budget renders vmi's PodDisruptionBudget: owned by the VMI, selecting its launcher Pods (the
// current one and a migration's target) by kubevirt.io/created-by, with minAvailable 2: a VMI
// has at most two launcher Pods (both during a migration), so the eviction API answers 429 for
// each of them and `kubectl drain` keeps retrying. (maxUnavailable 0 would block as well, but
// kube-controller-manager must then look up a scale subresource the VMI does not have, and
// warns on every budget; a number in minAvailable needs none.)
func Budget(vmi *v1.VirtualMachineInstance) *policyv1.PodDisruptionBudget {
	two := intstr.FromInt32(2)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Name:            BudgetName(vmi),
			Namespace:       vmi.Namespace,
			Labels:          map[string]string{v1.CreatedByLabel: string(vmi.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &two,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.CreatedByLabel: string(vmi.UID)}},
		},
	}
}

// Migration renders the evacuation migration of vmi off node.
func Migration(vmi *v1.VirtualMachineInstance, node string) *v1.VirtualMachineInstanceMigration {
	return &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: MigrationGenerateName,
			Namespace:    vmi.Namespace,
			Labels:       map[string]string{v1.MigrationSelectorLabel: vmi.Name},
			Annotations:  map[string]string{v1.EvacuationMigrationAnnotation: node},
		},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi.Name},
	}
}

// Decision is what to do about moving a VMI off its node.
type Decision struct {
	// Migrate says to create an evacuation migration now.
	Migrate bool
	// RetryAfter, when positive, is how long the VMI's back-off still runs: look again then.
	RetryAfter time.Duration
}

// Decide says whether vmi, running on node, is to be evacuated now: the node is cordoned
// (unschedulable), the VMI migrates on eviction, has no migration in flight (among migrations,
// those naming it), and the back-off after its failed evacuation migrations off the node has
// run out.
func Decide(vmi *v1.VirtualMachineInstance, node *corev1.Node, migrations []*v1.VirtualMachineInstanceMigration, now time.Time) Decision {
	if node == nil || !node.Spec.Unschedulable || node.Name != vmi.Status.NodeName || !migratesOnEviction(vmi) {
		return Decision{}
	}
	if migrationretry.InFlight(vmi, migrations) {
		// The migration's end updates it and requeues the VMI.
		return Decision{}
	}
	evacuationOffNode := func(m *v1.VirtualMachineInstanceMigration) bool {
		return m.Annotations[v1.EvacuationMigrationAnnotation] == node.Name
	}
	if wait := migrationretry.Wait(vmi, migrations, evacuationOffNode, now); wait > 0 {
		return Decision{RetryAfter: wait}
	}
	return Decision{Migrate: true}
}
