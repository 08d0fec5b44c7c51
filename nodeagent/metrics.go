package nodeagent

import (
	"sync"

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

// registerMigrationMetrics adds the gauges to the registry /metrics serves.
func registerMigrationMetrics() {
	registerMigrationGaugesOn.Do(func() {
		for _, g := range migrationGauges {
			legacyregistry.MustRegister(g)
		}
	})
}

// observeMigration records the progress of vmi's running migration m, or forgets it once ended.
func (a *Agent) observeMigration(vmi *v1.VirtualMachineInstance, m *protocol.MigrationStatus) {
	labels := []string{vmi.Namespace, vmi.Name, a.opts.NodeName}
	if m.Ended() {
		for _, g := range migrationGauges {
			g.DeleteLabelValues(labels...)
		}
		return
	}
	migrationDataProcessed.WithLabelValues(labels...).Set(float64(m.DataProcessed))
	migrationDataRemaining.WithLabelValues(labels...).Set(float64(m.DataRemaining))
	migrationDataTotal.WithLabelValues(labels...).Set(float64(m.DataTotal))
	migrationDirtyMemoryRate.WithLabelValues(labels...).Set(float64(m.MemoryDirtyRate))
	migrationMemoryTransfer.WithLabelValues(labels...).Set(float64(m.MemoryBps))
}
