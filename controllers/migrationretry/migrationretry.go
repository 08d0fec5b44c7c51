// Package migrationretry holds what the controllers that create migrations on their own (the
// evacuation of cordoned nodes, automated workload updates) share: whether a VMI has a
// migration in flight, how many of their migrations of a VMI failed in a row, and the back-off
// before the next one.
package migrationretry

import (
	"cmp"
	"slices"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// The back-off after failed migrations: BaseBackoff after the first failure, doubling with each
// further one, at most MaxBackoff.
const (
	BaseBackoff = 10 * time.Second
	MaxBackoff  = 5 * time.Minute
)

// Backoff is how long to wait after the failures-th consecutive failed migration before the
// next one: 10 s, 20 s, 40 s, ... at most 5 min; 0 without failures.
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

// LiveMigratable reports whether vmi's LiveMigratable condition is True.
func LiveMigratable(vmi *v1.VirtualMachineInstance) bool {
	c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable)
	return c != nil && c.Status == v1.ConditionTrue
}

// Ended reports whether a migration has ended.
func Ended(m *v1.VirtualMachineInstanceMigration) bool {
	return m.Status.Phase == v1.MigrationSucceeded || m.Status.Phase == v1.MigrationFailed
}

// InFlight reports whether vmi has a migration in flight: its migration state names a
// migration that has neither completed nor failed, or one of migrations (those naming the VMI)
// has not ended.
func InFlight(vmi *v1.VirtualMachineInstance, migrations []*v1.VirtualMachineInstanceMigration) bool {
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID != "" && !s.Completed && !s.Failed {
		return true
	}
	return slices.ContainsFunc(migrations, func(m *v1.VirtualMachineInstanceMigration) bool { return !Ended(m) })
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

// failures counts the migrations of vmi that mine accepts and that failed since the last one
// that succeeded, and says when the latest failed. Migrations older than the VMI (of an earlier
// VMI of that name) do not count.
func failures(vmi *v1.VirtualMachineInstance, migrations []*v1.VirtualMachineInstanceMigration,
	mine func(*v1.VirtualMachineInstanceMigration) bool) (int, time.Time) {
	var own []*v1.VirtualMachineInstanceMigration
	for _, m := range migrations {
		if mine(m) && !m.CreationTimestamp.Before(&vmi.CreationTimestamp) {
			own = append(own, m)
		}
	}
	// Newest first.
	slices.SortFunc(own, func(a, b *v1.VirtualMachineInstanceMigration) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	n, latest := 0, time.Time{}
	for _, m := range own {
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

// Wait is how long the back-off after vmi's failed migrations (those mine accepts) still runs
// at now: 0 when another may start.
func Wait(vmi *v1.VirtualMachineInstance, migrations []*v1.VirtualMachineInstanceMigration,
	mine func(*v1.VirtualMachineInstanceMigration) bool, now time.Time) time.Duration {
	n, latest := failures(vmi, migrations, mine)
	if n == 0 {
		return 0
	}
	return max(latest.Add(Backoff(n)).Sub(now), 0)
}
