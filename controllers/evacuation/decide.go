package evacuation

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// KubeVirt's names of what this controller creates.
const (
	// DisruptionBudgetPrefix starts the name of a VMI's PodDisruptionBudget; the VMI's UID
	// follows.
	DisruptionBudgetPrefix = "kubevirt-disruption-budget-"
	// MigrationGenerateName prefixes the names of evacuation migrations.
	MigrationGenerateName = "kubevirt-evacuation-"
)

// The back-off of a VMI whose evacuation migrations off a node failed: BaseBackoff after the
// first failure, doubling with each further one, at most MaxBackoff.
const (
	BaseBackoff = 10 * time.Second
	MaxBackoff  = 5 * time.Minute
)

// Strategy is vmi's effective eviction strategy: its spec.evictionStrategy, None when unset
// (Vireo's cluster settings have no evictionStrategy to fall back to).
func Strategy(vmi *v1.VirtualMachineInstance) v1.EvictionStrategy {
	if vmi.Spec.EvictionStrategy == nil || *vmi.Spec.EvictionStrategy == "" {
		return v1.EvictionStrategyNone
	}
	return *vmi.Spec.EvictionStrategy
}

// liveMigratable reports whether vmi's LiveMigratable condition is True.
func liveMigratable(vmi *v1.VirtualMachineInstance) bool {
	c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable)
	return c != nil && c.Status == v1.ConditionTrue
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
		return liveMigratable(vmi)
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
	return alive(vmi) && vmi.Status.Phase == v1.Running && vmi.Status.NodeName != "" && liveMigratable(vmi)
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

// Backoff is how long to wait after the failures-th consecutive failed evacuation migration
// before the next one: 10 s, 20 s, 40 s, ... at most 5 min; 0 without failures.
func Backoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := BaseBackoff
	for range failures - 1 {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return d
}

// ended reports whether a migration has ended.
func ended(m *v1.VirtualMachineInstanceMigration) bool {
	return m.Status.Phase == v1.MigrationSucceeded || m.Status.Phase == v1.MigrationFailed
}

// migrating reports whether vmi has a migration in flight: its migration state names a
// migration that has neither completed nor failed, or one of migrations (those naming the VMI)
// has not ended.
func migrating(vmi *v1.VirtualMachineInstance, migrations []*v1.VirtualMachineInstanceMigration) bool {
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID != "" && !s.Completed && !s.Failed {
		return true
	}
	return slices.ContainsFunc(migrations, func(m *v1.VirtualMachineInstanceMigration) bool { return !ended(m) })
}

// failedAt is when migration m failed: its Failed phase transition, else the end of its
// migration state, else its creation.
func failedAt(m *v1.VirtualMachineInstanceMigration) time.Time {
	for _, t := range m.Status.PhaseTransitionTimestamps {
		if t.Phase == v1.MigrationFailed {
			return t.PhaseTransitionTimestamp.Time
		}
	}
	if s := m.Status.MigrationState; s != nil && s.EndTimestamp != nil {
		return s.EndTimestamp.Time
	}
	return m.CreationTimestamp.Time
}

// failures counts the evacuation migrations of vmi off node that failed since the last one that
// succeeded, and says when the latest failed. Migrations older than the VMI (of an earlier VMI
// of that name) do not count.
func failures(vmi *v1.VirtualMachineInstance, node string, migrations []*v1.VirtualMachineInstanceMigration) (int, time.Time) {
	var evacuations []*v1.VirtualMachineInstanceMigration
	for _, m := range migrations {
		if m.Annotations[v1.EvacuationMigrationAnnotation] == node && !m.CreationTimestamp.Before(&vmi.CreationTimestamp) {
			evacuations = append(evacuations, m)
		}
	}
	// Newest first.
	slices.SortFunc(evacuations, func(a, b *v1.VirtualMachineInstanceMigration) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	n, latest := 0, time.Time{}
	for _, m := range evacuations {
		if m.Status.Phase != v1.MigrationFailed {
			break
		}
		if at := failedAt(m); at.After(latest) {
			latest = at
		}
		n++
	}
	return n, latest
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
	if migrating(vmi, migrations) {
		// The migration's end updates it and requeues the VMI.
		return Decision{}
	}
	if n, latest := failures(vmi, node.Name, migrations); n > 0 {
		if wait := latest.Add(Backoff(n)).Sub(now); wait > 0 {
			return Decision{RetryAfter: wait}
		}
	}
	return Decision{Migrate: true}
}
