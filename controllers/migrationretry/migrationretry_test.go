package migrationretry

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestBackoff(t *testing.T) {
	for failures, want := range map[int]time.Duration{
		-1: 0, 0: 0, 1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 5: 160 * time.Second,
		6: 5 * time.Minute, 7: 5 * time.Minute, 100: 5 * time.Minute,
	} {
		if got := Backoff(failures); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", failures, got, want)
		}
	}
}

func TestWaitCountsOnlyOwnFailuresSinceTheLastSuccess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)}}
	m := func(name string, mine bool, p v1.VirtualMachineInstanceMigrationPhase, at time.Time) *v1.VirtualMachineInstanceMigration {
		out := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at)},
			Status: v1.VirtualMachineInstanceMigrationStatus{Phase: p}}
		if mine {
			out.Annotations = map[string]string{"mine": ""}
		}
		return out
	}
	mine := func(m *v1.VirtualMachineInstanceMigration) bool { _, ok := m.Annotations["mine"]; return ok }
	ms := []*v1.VirtualMachineInstanceMigration{
		m("old-failed", true, v1.MigrationFailed, t0.Add(-time.Hour)), // of an earlier VMI
		m("ok", true, v1.MigrationSucceeded, t0.Add(time.Minute)),
		m("f1", true, v1.MigrationFailed, t0.Add(2*time.Minute)),
		m("other", false, v1.MigrationFailed, t0.Add(3*time.Minute)),
		m("f2", true, v1.MigrationFailed, t0.Add(4*time.Minute)),
	}
	if n, latest := failures(vmi, ms, mine); n != 2 || !latest.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("failures = %d, %v; want 2 failures, the latest at +4m", n, latest)
	}
	if got := Wait(vmi, ms, mine, t0.Add(4*time.Minute+5*time.Second)); got != 15*time.Second {
		t.Errorf("Wait 5 s after the second failure = %v, want 15s", got)
	}
	if got := Wait(vmi, ms, mine, t0.Add(time.Hour)); got != 0 {
		t.Errorf("Wait an hour later = %v, want 0", got)
	}
	if InFlight(vmi, ms) {
		t.Error("InFlight with every migration ended")
	}
	if !InFlight(vmi, append(ms, m("running", false, v1.MigrationRunning, t0))) {
		t.Error("not InFlight with a running migration")
	}
}
