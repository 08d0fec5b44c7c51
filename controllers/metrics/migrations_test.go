package metrics

import (
	"strings"
	"testing"
	"time"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

func migrationIn(name, vmi string, phase v1.VirtualMachineInstanceMigrationPhase) *v1.VirtualMachineInstanceMigration {
	return &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi}, Status: v1.VirtualMachineInstanceMigrationStatus{Phase: phase}}
}

func TestMigrationCounts(t *testing.T) {
	c := &migrationCollector{migrations: vireolisters.NewVirtualMachineInstanceMigrationLister(indexer(
		migrationIn("p1", "a", v1.MigrationPending), migrationIn("p2", "b", v1.MigrationPending),
		migrationIn("s", "c", v1.MigrationScheduling),
		migrationIn("r1", "d", v1.MigrationScheduled), migrationIn("r2", "e", v1.MigrationTargetReady), migrationIn("r3", "f", v1.MigrationRunning),
		migrationIn("ok", "g", v1.MigrationSucceeded), migrationIn("ko", "g", v1.MigrationFailed),
	))}
	want := `
# HELP kubevirt_vmi_migration_failed [ALPHA] Indicates if the VMI migration failed.
# TYPE kubevirt_vmi_migration_failed gauge
kubevirt_vmi_migration_failed{namespace="ns",vmi="g",vmim="ko"} 1
# HELP kubevirt_vmi_migration_succeeded [ALPHA] Indicates if the VMI migration succeeded.
# TYPE kubevirt_vmi_migration_succeeded gauge
kubevirt_vmi_migration_succeeded{namespace="ns",vmi="g",vmim="ok"} 1
# HELP kubevirt_vmi_migrations_in_pending_phase [ALPHA] Number of current pending migrations.
# TYPE kubevirt_vmi_migrations_in_pending_phase gauge
kubevirt_vmi_migrations_in_pending_phase 2
# HELP kubevirt_vmi_migrations_in_running_phase [ALPHA] Number of current running migrations.
# TYPE kubevirt_vmi_migrations_in_running_phase gauge
kubevirt_vmi_migrations_in_running_phase 3
# HELP kubevirt_vmi_migrations_in_scheduling_phase [ALPHA] Number of current scheduling migrations.
# TYPE kubevirt_vmi_migrations_in_scheduling_phase gauge
kubevirt_vmi_migrations_in_scheduling_phase 1
`
	reg := metrics.NewKubeRegistry()
	reg.CustomMustRegister(c)
	if err := promtestutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestMigrationPhaseTransition(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	reg.MustRegister(migrationPhaseTransition)
	migrationPhaseTransition.Reset() // the histogram is global: start afresh on each -count
	created := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	m := func(phase v1.VirtualMachineInstanceMigrationPhase, after time.Duration) *v1.VirtualMachineInstanceMigration {
		o := migrationIn("m", "vm", phase)
		o.CreationTimestamp = created
		o.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{{Phase: phase, PhaseTransitionTimestamp: metav1.NewTime(created.Add(after))}}
		return o
	}
	ObserveMigrationPhaseTransition(m(v1.MigrationPending, 0), m(v1.MigrationScheduling, time.Second))
	ObserveMigrationPhaseTransition(m(v1.MigrationScheduling, time.Second), m(v1.MigrationScheduling, time.Second)) // a resync
	// One write records Scheduled, PreparingTarget, TargetReady and Running: all count.
	quick := m(v1.MigrationRunning, 3*time.Second)
	quick.Status.PhaseTransitionTimestamps = nil
	for i, p := range []v1.VirtualMachineInstanceMigrationPhase{v1.MigrationScheduling, v1.MigrationScheduled, v1.MigrationPreparingTarget, v1.MigrationTargetReady, v1.MigrationRunning} {
		quick.Status.PhaseTransitionTimestamps = append(quick.Status.PhaseTransitionTimestamps,
			v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: metav1.NewTime(created.Add(time.Duration(i) * time.Second))})
	}
	ObserveMigrationPhaseTransition(m(v1.MigrationScheduling, time.Second), quick)
	ObserveMigrationPhaseTransition(m(v1.MigrationRunning, 4*time.Second), m(v1.MigrationSucceeded, 25*time.Second))
	for phase, want := range map[string]uint64{"Scheduling": 1, "Scheduled": 1, "TargetReady": 1, "Running": 1, "Succeeded": 1} {
		got, err := sampleCount(reg, phase)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("observations of %s = %d, want %d", phase, got, want)
		}
	}
}

// sampleCount is the number of observations of the migration histogram for phase.
func sampleCount(reg metrics.KubeRegistry, phase string) (uint64, error) {
	families, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() != "kubevirt_vmi_migration_phase_transition_time_from_creation_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "phase" && l.GetValue() == phase {
					return m.GetHistogram().GetSampleCount(), nil
				}
			}
		}
	}
	return 0, nil
}
