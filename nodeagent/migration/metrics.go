package migration

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// KubeVirt's gauges of a running migration, reported by the source's node agent from its
// launcher's job statistics (libvirt's, every half second) while the migration runs; the
// series of a migration go when it ends.
var (
	migrationLabels           = []string{"namespace", "name", "node"}
	migrationDataProcessed    = newMigrationGauge("kubevirt_vmi_migration_data_processed_bytes", "The total Guest OS data processed and migrated to the new VM.")
	migrationDataRemaining    = newMigrationGauge("kubevirt_vmi_migration_data_remaining_bytes", "The remaining guest OS data to be migrated to the new VM.")
	migrationDataTotal        = newMigrationGauge("kubevirt_vmi_migration_data_total_bytes", "The total Guest OS data to be migrated to the new VM.")
	migrationDirtyMemoryRate  = newMigrationGauge("kubevirt_vmi_migration_dirty_memory_rate_bytes", "The rate of memory being dirty in the Guest OS.")
	migrationMemoryTransfer   = newMigrationGauge("kubevirt_vmi_migration_memory_transfer_rate_bytes", "The rate at which the memory is being transferred.")
	migrationGauges           = []*metrics.GaugeVec{migrationDataProcessed, migrationDataRemaining, migrationDataTotal, migrationDirtyMemoryRate, migrationMemoryTransfer}
	registerMigrationGaugesOn sync.Once
)

func newMigrationGauge(name, help string) *metrics.GaugeVec {
	return metrics.NewGaugeVec(&metrics.GaugeOpts{Name: name, Help: help, StabilityLevel: metrics.ALPHA}, migrationLabels)
}

// Vireo's figures of the migrations that arrived on this node, observed by the target's node
// agent from its launcher's completed job statistics (libvirt's). KubeVirt reports none of
// them: the guest's pause is what a migration costs its users.
var (
	migrationDowntime = metrics.NewHistogram(&metrics.HistogramOpts{
		Name:           "vireo_vmi_migration_downtime_seconds",
		Help:           "Histogram of how long guests that migrated to this node were paused at the switch-over.",
		Buckets:        []float64{0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30},
		StabilityLevel: metrics.ALPHA,
	})
	migrationTransfer = metrics.NewHistogram(&metrics.HistogramOpts{
		Name:           "vireo_vmi_migration_transfer_seconds",
		Help:           "Histogram of how long libvirt took to move guests that migrated to this node, from the first byte to the guest running here.",
		Buckets:        []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
		StabilityLevel: metrics.ALPHA,
	})
	migrationReceived = metrics.NewCounter(&metrics.CounterOpts{
		Name:           "vireo_vmi_migration_received_bytes_total",
		Help:           "Guest memory and disk data received by the migrations that arrived on this node.",
		StabilityLevel: metrics.ALPHA,
	})
)

// RegisterMetrics adds the gauges and the arrivals' figures to the registry /metrics serves.
func RegisterMetrics() {
	registerMigrationGaugesOn.Do(func() {
		for _, g := range migrationGauges {
			legacyregistry.MustRegister(g)
		}
		legacyregistry.MustRegister(migrationDowntime, migrationTransfer, migrationReceived)
	})
}

// arrivedByMigration reports whether a target launcher's status went from prev to st by its
// guest's arrival: st is the first report of a completed migration with the target's figures
// (only a target reports ElapsedMs) seen live: not the first report a new session reads, so a
// restarted agent counts nothing twice.
func arrivedByMigration(prev, st *protocol.DomainStatus) bool {
	if prev == nil || st == nil || st.Migration == nil || st.Migration.ElapsedMs == 0 || st.Migration.Phase != protocol.MigrationCompleted {
		return false
	}
	return prev.Migration == nil || prev.Migration.Phase != protocol.MigrationCompleted
}

// ObserveArrival records the figures of a migration that arrived here, when a target
// launcher's status went from prev to st by its guest's arrival (arrivedByMigration).
func ObserveArrival(prev, st *protocol.DomainStatus) {
	if !arrivedByMigration(prev, st) {
		return
	}
	m := st.Migration
	migrationDowntime.Observe(float64(m.DowntimeMs) / 1000)
	migrationTransfer.Observe(float64(m.ElapsedMs) / 1000)
	migrationReceived.Add(float64(m.DataProcessed))
}

// observeMigration records the progress of vmi's running migration m, or forgets it once ended.
// The series are forgotten too when the agent forgets the migration (end): on success
// the target's agent usually reports the end first, and the source's launcher Pod goes before
// its own report of the end reaches this agent.
func (m *Manager) observeMigration(uid types.UID, vmi *v1.VirtualMachineInstance, mig *protocol.MigrationStatus) {
	labels := []string{vmi.Namespace, vmi.Name, m.node}
	if mig.Ended() {
		forgetMigrationProgress(labels)
		return
	}
	w := m.record(uid)
	m.mu.Lock()
	w.progressLabels = labels
	m.mu.Unlock()
	migrationDataProcessed.WithLabelValues(labels...).Set(float64(mig.DataProcessed))
	migrationDataRemaining.WithLabelValues(labels...).Set(float64(mig.DataRemaining))
	migrationDataTotal.WithLabelValues(labels...).Set(float64(mig.DataTotal))
	migrationDirtyMemoryRate.WithLabelValues(labels...).Set(float64(mig.MemoryDirtyRate))
	migrationMemoryTransfer.WithLabelValues(labels...).Set(float64(mig.MemoryBps))
}

// forgetMigrationProgress removes the progress series of a migration (labels: namespace, name,
// node).
func forgetMigrationProgress(labels []string) {
	for _, g := range migrationGauges {
		g.DeleteLabelValues(labels...)
	}
}
