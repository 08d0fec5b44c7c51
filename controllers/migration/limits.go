package migration

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// LimitRecheck is how soon a migration held back by the parallel limits is looked at again.
const LimitRecheck = 5 * time.Second

// flight is a migration that counts against the parallel limits.
type flight struct {
	uid        types.UID
	sourceNode string
}

// counts reports whether a migration in phase counts against the parallel limits: it has left
// Pending and not ended.
func counts(phase v1.VirtualMachineInstanceMigrationPhase) bool {
	return phase != v1.MigrationPhaseUnset && phase != v1.MigrationPending && !ended(phase)
}

// overLimit says which parallel limit a new migration from sourceNode would exceed, given the
// migrations in flight ("" when none).
func overLimit(inFlight []flight, sourceNode string, limits defaults.MigrationSettings) string {
	fromNode := 0
	for _, f := range inFlight {
		if f.sourceNode == sourceNode {
			fromNode++
		}
	}
	if uint64(len(inFlight)) >= uint64(limits.ParallelMigrationsPerCluster) {
		return fmt.Sprintf("%d migrations are running in the cluster (parallelMigrationsPerCluster %d)", len(inFlight), limits.ParallelMigrationsPerCluster)
	}
	if uint64(fromNode) >= uint64(limits.ParallelOutboundMigrationsPerNode) {
		return fmt.Sprintf("%d migrations are leaving node %s (parallelOutboundMigrationsPerNode %d)", fromNode, sourceNode, limits.ParallelOutboundMigrationsPerNode)
	}
	return ""
}

// admissions serialises the starts of migrations and remembers the ones let through whose new
// phase the informer has not delivered yet, so that concurrent workers cannot together exceed
// the limits.
type admissions struct {
	mu sync.Mutex
	// started maps migrations let through, still Pending in the cache, to their source node.
	started map[types.UID]string
}

// inFlight lists the migrations that count against the limits, but for self: those the cache
// shows running and those let through that it still shows Pending. The caller holds mu.
func (a *admissions) inFlight(all []*v1.VirtualMachineInstanceMigration, self types.UID) []flight {
	var out []flight
	pending := map[types.UID]bool{}
	for _, m := range all {
		switch {
		case m.UID == self:
		case counts(m.Status.Phase):
			node := ""
			if s := m.Status.MigrationState; s != nil {
				node = s.SourceNode
			}
			out = append(out, flight{uid: m.UID, sourceNode: node})
		case m.Status.Phase == v1.MigrationPending || m.Status.Phase == v1.MigrationPhaseUnset:
			pending[m.UID] = true
		}
	}
	for uid, node := range a.started {
		switch {
		case uid == self:
		case pending[uid]:
			out = append(out, flight{uid: uid, sourceNode: node})
		default:
			// The cache shows it past Pending (counted above), ended or gone.
			delete(a.started, uid)
		}
	}
	return out
}

// admit records that migration uid from sourceNode was let through. The caller holds mu.
func (a *admissions) admit(uid types.UID, sourceNode string) {
	if a.started == nil {
		a.started = map[types.UID]string{}
	}
	a.started[uid] = sourceNode
}
