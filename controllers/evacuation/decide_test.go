package evacuation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// vmiWith is a Running, live-migratable VMI on node1 with strategy s ("" for unset), changed
// by the mutators.
func vmiWith(s v1.EvictionStrategy, mutate ...func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns", UID: "0123456789abcdef", CreationTimestamp: metav1.NewTime(t0)},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Running, NodeName: "node1", Conditions: []v1.VirtualMachineInstanceCondition{
			{Type: v1.VirtualMachineInstanceIsMigratable, Status: v1.ConditionTrue},
		}},
	}
	if s != "" {
		vmi.Spec.EvictionStrategy = &s
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func notMigratable(vmi *v1.VirtualMachineInstance) {
	vmi.Status.Conditions[0].Status = v1.ConditionFalse
}

func phase(p v1.VirtualMachineInstancePhase) func(*v1.VirtualMachineInstance) {
	return func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = p }
}

func deleting(vmi *v1.VirtualMachineInstance) {
	now := metav1.NewTime(t0)
	vmi.DeletionTimestamp = &now
}

func TestNeedsBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		vmi  *v1.VirtualMachineInstance
		want bool
	}{
		{"unset is None", vmiWith(""), false},
		{"None", vmiWith(v1.EvictionStrategyNone), false},
		{"LiveMigrate", vmiWith(v1.EvictionStrategyLiveMigrate), true},
		{"LiveMigrate, not migratable", vmiWith(v1.EvictionStrategyLiveMigrate, notMigratable), true},
		{"LiveMigrate, Pending", vmiWith(v1.EvictionStrategyLiveMigrate, phase(v1.Pending)), true},
		{"External", vmiWith(v1.EvictionStrategyExternal, notMigratable), true},
		{"LiveMigrateIfPossible, migratable", vmiWith(v1.EvictionStrategyLiveMigrateIfPossible), true},
		{"LiveMigrateIfPossible, not migratable", vmiWith(v1.EvictionStrategyLiveMigrateIfPossible, notMigratable), false},
		{"LiveMigrateIfPossible, no condition yet", vmiWith(v1.EvictionStrategyLiveMigrateIfPossible,
			func(vmi *v1.VirtualMachineInstance) { vmi.Status.Conditions = nil }), false},
		{"LiveMigrate, Succeeded", vmiWith(v1.EvictionStrategyLiveMigrate, phase(v1.Succeeded)), false},
		{"LiveMigrate, Failed", vmiWith(v1.EvictionStrategyLiveMigrate, phase(v1.Failed)), false},
		{"LiveMigrate, being deleted", vmiWith(v1.EvictionStrategyLiveMigrate, deleting), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsBudget(tc.vmi); got != tc.want {
				t.Errorf("NeedsBudget = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	vmi := vmiWith(v1.EvictionStrategyLiveMigrate)
	pdb := Budget(vmi)
	if pdb.Name != "kubevirt-disruption-budget-0123456789abcdef" || pdb.Namespace != "ns" {
		t.Errorf("name = %s/%s", pdb.Namespace, pdb.Name)
	}
	if ref := metav1.GetControllerOf(pdb); ref == nil || ref.UID != vmi.UID || ref.Kind != "VirtualMachineInstance" || ref.APIVersion != "kubevirt.io/v1" {
		t.Errorf("controller = %+v", ref)
	}
	if pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != intstr.FromInt32(2) || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("maxUnavailable = %v, minAvailable = %v", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if got := pdb.Spec.Selector.MatchLabels; len(got) != 1 || got[v1.CreatedByLabel] != "0123456789abcdef" {
		t.Errorf("selector = %v", got)
	}
}

// migration is a migration of vm1 created at created, in phase p (Failed at end), an
// evacuation off node when node is not "".
func migration(name, node string, p v1.VirtualMachineInstanceMigrationPhase, created, end time.Time) *v1.VirtualMachineInstanceMigration {
	m := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1"},
		Status:     v1.VirtualMachineInstanceMigrationStatus{Phase: p},
	}
	if node != "" {
		m.Annotations = map[string]string{v1.EvacuationMigrationAnnotation: node}
	}
	if p == v1.MigrationFailed || p == v1.MigrationSucceeded {
		m.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{{Phase: p, PhaseTransitionTimestamp: metav1.NewTime(end)}}
	}
	return m
}

func TestDecide(t *testing.T) {
	cordoned := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	schedulable := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}}
	now := t0.Add(time.Hour)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	failed := func(name string, created, end time.Duration) *v1.VirtualMachineInstanceMigration {
		return migration(name, "node1", v1.MigrationFailed, at(created), at(end))
	}
	migrate := Decision{Migrate: true}
	for _, tc := range []struct {
		name       string
		vmi        *v1.VirtualMachineInstance
		node       *corev1.Node
		migrations []*v1.VirtualMachineInstanceMigration
		want       Decision
	}{
		{name: "LiveMigrate on a cordoned node", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned, want: migrate},
		{name: "LiveMigrateIfPossible, migratable", vmi: vmiWith(v1.EvictionStrategyLiveMigrateIfPossible), node: cordoned, want: migrate},
		{name: "schedulable node", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: schedulable},
		{name: "no node", vmi: vmiWith(v1.EvictionStrategyLiveMigrate)},
		{name: "node is not the VMI's", vmi: vmiWith(v1.EvictionStrategyLiveMigrate,
			func(vmi *v1.VirtualMachineInstance) { vmi.Status.NodeName = "node2" }), node: cordoned},
		{name: "None", vmi: vmiWith(v1.EvictionStrategyNone), node: cordoned},
		{name: "unset", vmi: vmiWith(""), node: cordoned},
		{name: "External", vmi: vmiWith(v1.EvictionStrategyExternal), node: cordoned},
		{name: "LiveMigrate, not migratable", vmi: vmiWith(v1.EvictionStrategyLiveMigrate, notMigratable), node: cordoned},
		{name: "LiveMigrateIfPossible, not migratable", vmi: vmiWith(v1.EvictionStrategyLiveMigrateIfPossible, notMigratable), node: cordoned},
		{name: "not running yet", vmi: vmiWith(v1.EvictionStrategyLiveMigrate, phase(v1.Scheduled)), node: cordoned},
		{name: "being deleted", vmi: vmiWith(v1.EvictionStrategyLiveMigrate, deleting), node: cordoned},
		{name: "migration state in flight", vmi: vmiWith(v1.EvictionStrategyLiveMigrate, func(vmi *v1.VirtualMachineInstance) {
			vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m"}
		}), node: cordoned},
		{name: "migration state completed", vmi: vmiWith(v1.EvictionStrategyLiveMigrate, func(vmi *v1.VirtualMachineInstance) {
			vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m", Completed: true, Failed: true}
		}), node: cordoned, want: migrate},
		{name: "a user's migration is pending", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{migration("m1", "", v1.MigrationPhaseUnset, at(-time.Second), time.Time{})}},
		{name: "an evacuation is running", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{migration("m1", "node1", v1.MigrationRunning, at(-time.Second), time.Time{})}},
		{name: "one failure, back-off running", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{failed("m1", -time.Minute, -4*time.Second)},
			want:       Decision{RetryAfter: 6 * time.Second}},
		{name: "one failure, back-off over", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{failed("m1", -time.Minute, -10*time.Second)}, want: migrate},
		{name: "three failures in a row", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{
				failed("m3", -time.Minute, -30*time.Second), failed("m1", -3*time.Minute, -170*time.Second), failed("m2", -2*time.Minute, -110*time.Second),
			},
			want: Decision{RetryAfter: 10 * time.Second}},
		{name: "a success resets the count", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{
				failed("m3", -time.Minute, -15*time.Second),
				migration("m2", "node1", v1.MigrationSucceeded, at(-2*time.Minute), at(-110*time.Second)),
				failed("m1", -3*time.Minute, -170*time.Second),
			},
			want: migrate},
		{name: "failures off another node and a user's do not count", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{
				migration("m2", "node2", v1.MigrationFailed, at(-time.Minute), at(-time.Second)),
				migration("m1", "", v1.MigrationFailed, at(-time.Minute), at(-time.Second)),
			},
			want: migrate},
		{name: "failures of an earlier VMI of the name do not count", vmi: vmiWith(v1.EvictionStrategyLiveMigrate), node: cordoned,
			migrations: []*v1.VirtualMachineInstanceMigration{migration("m1", "node1", v1.MigrationFailed, t0.Add(-time.Second), at(-time.Second))},
			want:       migrate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.vmi, tc.node, tc.migrations, now); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMigration(t *testing.T) {
	m := Migration(vmiWith(v1.EvictionStrategyLiveMigrate), "node1")
	if m.GenerateName != "kubevirt-evacuation-" || m.Name != "" || m.Namespace != "ns" || m.Spec.VMIName != "vm1" {
		t.Errorf("migration = %+v", m.ObjectMeta)
	}
	if m.Annotations["kubevirt.io/evacuationMigration"] != "node1" || m.Labels["kubevirt.io/vmi-name"] != "vm1" {
		t.Errorf("annotations %v, labels %v", m.Annotations, m.Labels)
	}
}
