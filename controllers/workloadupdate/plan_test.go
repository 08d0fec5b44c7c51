package workloadupdate

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// running is a Running VMI on n1 in launcher "old", created i minutes after t0.
func running(i int, migratable bool) *v1.VirtualMachineInstance {
	status := v1.ConditionFalse
	if migratable {
		status = v1.ConditionTrue
	}
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("vm%02d", i), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(i) * time.Minute))},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Running, NodeName: "n1", LauncherContainerImageVersion: "old",
			Conditions: []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable, Status: status}}},
	}
}

func names(vmis []*v1.VirtualMachineInstance) []string {
	var out []string
	for _, v := range vmis {
		out = append(out, v.Name)
	}
	return out
}

func settings(methods ...v1.WorkloadUpdateMethod) defaults.WorkloadUpdateSettings {
	kv := &v1.KubeVirt{Spec: v1.KubeVirtSpec{WorkloadUpdateStrategy: &v1.KubeVirtWorkloadUpdateStrategy{WorkloadUpdateMethods: methods}}}
	return defaults.KubeVirtSettingsOf(kv).WorkloadUpdates
}

func TestOutdated(t *testing.T) {
	vmi := running(0, true)
	if !Outdated(vmi, "new") || Outdated(vmi, "old") {
		t.Error("a Running VMI in launcher old: outdated against new, not against old")
	}
	vmi.Status.LauncherContainerImageVersion = ""
	if Outdated(vmi, "new") {
		t.Error("a VMI whose launcher is not known yet is not outdated")
	}
	vmi = running(0, true)
	vmi.Status.Phase = v1.Succeeded
	if Outdated(vmi, "new") {
		t.Error("an ended VMI is not outdated")
	}
}

func TestNoMethodsNoMoves(t *testing.T) {
	p := Decide(Input{Settings: settings(), ParallelMigrations: 5, Outdated: []*v1.VirtualMachineInstance{running(0, true), running(1, false)}, Now: t0})
	if len(p.Migrate)+len(p.Evict) != 0 || p.Again != 0 {
		t.Errorf("with no methods: %+v, want nothing", p)
	}
}

func TestLiveMigrateWithinTheClusterLimit(t *testing.T) {
	var vmis []*v1.VirtualMachineInstance
	for i := 7; i >= 0; i-- {
		vmis = append(vmis, running(i, i != 3))
	}
	p := Decide(Input{Settings: settings(v1.WorkloadUpdateMethodLiveMigrate), ParallelMigrations: 5, InFlight: 2, Outdated: vmis, Now: t0})
	if got := fmt.Sprint(names(p.Migrate)); got != "[vm00 vm01 vm02]" {
		t.Errorf("migrated %s, want the 3 oldest migratable (5 slots, 2 in flight)", got)
	}
	if len(p.Evict) != 0 {
		t.Errorf("evicted %v without Evict", names(p.Evict))
	}
	if p.Waiting != 4 || p.Again != Resync {
		t.Errorf("waiting %d, again %v; want 4 (vm03 not migratable is left alone) and %v", p.Waiting, p.Again, Resync)
	}
}

func TestBothMethodsEvictOnlyTheUnmigratableInBatches(t *testing.T) {
	var vmis []*v1.VirtualMachineInstance
	for i := range 6 {
		vmis = append(vmis, running(i, i%2 == 0))
	}
	s := settings(v1.WorkloadUpdateMethodLiveMigrate, v1.WorkloadUpdateMethodEvict)
	s.BatchEvictionSize = 2
	p := Decide(Input{Settings: s, ParallelMigrations: 5, Outdated: vmis, Now: t0})
	if got := fmt.Sprint(names(p.Migrate), names(p.Evict)); got != "[vm00 vm02 vm04] [vm01 vm03]" {
		t.Errorf("migrate, evict = %s; want the migratable migrated, the first 2 others evicted", got)
	}
	if p.Again != time.Minute {
		t.Errorf("again %v, want the batch interval", p.Again)
	}
	// A minute has not passed since that batch: vm05 waits for the next.
	p = Decide(Input{Settings: s, ParallelMigrations: 5, Outdated: []*v1.VirtualMachineInstance{running(5, false)},
		LastEvictions: t0, Now: t0.Add(20 * time.Second)})
	if len(p.Evict) != 0 || p.Again != 40*time.Second {
		t.Errorf("within the batch interval: evict %v, again %v; want none, 40s", names(p.Evict), p.Again)
	}
	p = Decide(Input{Settings: s, ParallelMigrations: 5, Outdated: []*v1.VirtualMachineInstance{running(5, false)},
		LastEvictions: t0, Now: t0.Add(time.Minute)})
	if fmt.Sprint(names(p.Evict)) != "[vm05]" {
		t.Errorf("after the batch interval: evict %v, want vm05", names(p.Evict))
	}
}

func TestEvictOnlyTakesMigratableGuestsToo(t *testing.T) {
	p := Decide(Input{Settings: settings(v1.WorkloadUpdateMethodEvict), ParallelMigrations: 5,
		Outdated: []*v1.VirtualMachineInstance{running(0, true), running(1, false)}, Now: t0})
	if len(p.Migrate) != 0 || fmt.Sprint(names(p.Evict)) != "[vm00 vm01]" {
		t.Errorf("migrate %v, evict %v; want both evicted", names(p.Migrate), names(p.Evict))
	}
}

func TestBusyOrBackingOffGuestsWait(t *testing.T) {
	migrating, held, failed, pending := running(0, true), running(1, true), running(2, true), running(3, true)
	pending.Status.Phase = v1.Scheduled
	migrating.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "u1"}
	failedMigration := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns", CreationTimestamp: metav1.NewTime(t0.Add(3 * time.Minute)),
			Annotations: map[string]string{v1.WorkloadUpdateMigrationAnnotation: ""}},
		Spec:   v1.VirtualMachineInstanceMigrationSpec{VMIName: failed.Name},
		Status: v1.VirtualMachineInstanceMigrationStatus{Phase: v1.MigrationFailed},
	}
	p := Decide(Input{Settings: settings(v1.WorkloadUpdateMethodLiveMigrate), ParallelMigrations: 5,
		Outdated:   []*v1.VirtualMachineInstance{migrating, held, failed, pending},
		Migrations: map[string][]*v1.VirtualMachineInstanceMigration{"ns/" + failed.Name: {failedMigration}},
		Skip:       map[string]bool{"ns/" + held.Name: true}, Now: t0.Add(3*time.Minute + 4*time.Second)})
	if len(p.Migrate) != 0 || p.Waiting != 4 {
		t.Errorf("migrate %v, waiting %d; want none, 4", names(p.Migrate), p.Waiting)
	}
	if p.Again != 6*time.Second {
		t.Errorf("again %v, want 6s (the failed migration's 10 s back-off)", p.Again)
	}
}
