package workloadupdate

import (
	"cmp"
	"slices"
	"time"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/migrationretry"
)

// KubeVirt's names of what this controller creates.
const (
	// MigrationGenerateName prefixes the names of workload update migrations.
	MigrationGenerateName = "kubevirt-workload-update-"
)

// Resync is how often the controller looks again while outdated guests remain (a changed
// setting, a migration slot that freed up, a batch interval that ran out).
const Resync = 30 * time.Second

// Outdated reports whether vmi runs in a launcher other than launcherImage: it has not ended,
// and the launcher image its status records is known and differs. (A VMI whose launcher Pod
// has not started yet records none.)
func Outdated(vmi *v1.VirtualMachineInstance, launcherImage string) bool {
	if vmi.Status.Phase == v1.Succeeded || vmi.Status.Phase == v1.Failed {
		return false
	}
	img := vmi.Status.LauncherContainerImageVersion
	return img != "" && img != launcherImage
}

// IsWorkloadUpdate reports whether m was created by this controller.
func IsWorkloadUpdate(m *v1.VirtualMachineInstanceMigration) bool {
	_, ok := m.Annotations[v1.WorkloadUpdateMigrationAnnotation]
	return ok
}

// Input is what a pass decides from.
type Input struct {
	// Settings are the workload update settings; ParallelMigrations the cluster's limit.
	Settings           defaults.WorkloadUpdateSettings
	ParallelMigrations uint32
	// Outdated are the outdated VMIs.
	Outdated []*v1.VirtualMachineInstance
	// Migrations are every migration in the cluster, by "namespace/vmiName" of the VMI each names.
	Migrations map[string][]*v1.VirtualMachineInstanceMigration
	// InFlight counts the migrations of the cluster that have not ended.
	InFlight int
	// Skip holds the keys of VMIs acted on a moment ago whose effect the caches do not show yet.
	Skip map[string]bool
	// LastEvictions is when the last batch of evictions was made (zero: never).
	LastEvictions time.Time
	Now           time.Time
}

// Plan is what a pass does.
type Plan struct {
	// Migrate are the VMIs to live-migrate now, Evict those whose launcher Pods to evict now.
	Migrate, Evict []*v1.VirtualMachineInstance
	// Waiting counts the outdated VMIs left for a later pass (no free migration slot, their
	// back-off, the next eviction batch, or a state in which they cannot be moved now).
	Waiting int
	// Again is when to look again (0: only when something changes).
	Again time.Duration
}

// Decide plans a pass, as KubeVirt's workload updater does: an outdated guest that runs and
// has no migration in flight is live-migrated when LiveMigrate is on and it is live-migratable,
// within the cluster's parallel migration limit (less those in flight) and after the back-off
// of its failed workload update migrations; else, when Evict is on, its launcher Pod is
// evicted, at most BatchEvictionSize per BatchEvictionInterval. VMIs are taken oldest first.
func Decide(in Input) Plan {
	var p Plan
	if !in.Settings.Enabled() || len(in.Outdated) == 0 {
		return p
	}
	vmis := slices.Clone(in.Outdated)
	slices.SortFunc(vmis, func(a, b *v1.VirtualMachineInstance) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slots := int(in.ParallelMigrations) - in.InFlight
	evictionsAt := in.LastEvictions.Add(in.Settings.BatchEvictionInterval)
	evictNow := in.LastEvictions.IsZero() || !in.Now.Before(evictionsAt)
	again := func(d time.Duration) {
		if d > 0 && (p.Again == 0 || d < p.Again) {
			p.Again = d
		}
	}
	for _, vmi := range vmis {
		key := vmi.Namespace + "/" + vmi.Name
		ms := in.Migrations[key]
		if in.Skip[key] || !movable(vmi) || migrationretry.InFlight(vmi, ms) {
			p.Waiting++
			continue
		}
		switch {
		case in.Settings.LiveMigrate && migrationretry.LiveMigratable(vmi):
			if wait := migrationretry.Wait(vmi, ms, IsWorkloadUpdate, in.Now); wait > 0 {
				p.Waiting++
				again(wait)
				continue
			}
			if len(p.Migrate) >= slots {
				p.Waiting++
				continue
			}
			p.Migrate = append(p.Migrate, vmi)
		case in.Settings.Evict:
			if !evictNow || len(p.Evict) >= int(in.Settings.BatchEvictionSize) {
				p.Waiting++
				again(evictionsAt.Sub(in.Now))
				continue
			}
			p.Evict = append(p.Evict, vmi)
		default:
			// Not live-migratable and eviction is off: left as it is, as in KubeVirt.
		}
	}
	if len(p.Evict) > 0 {
		again(in.Settings.BatchEvictionInterval)
	}
	if p.Again == 0 && (p.Waiting > 0 || len(p.Migrate) > 0) {
		p.Again = Resync
	}
	return p
}

// movable reports whether vmi can be moved now: it runs on a node and is not being deleted.
func movable(vmi *v1.VirtualMachineInstance) bool {
	return vmi.DeletionTimestamp == nil && vmi.Status.Phase == v1.Running && vmi.Status.NodeName != ""
}
