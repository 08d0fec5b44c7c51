package defaults

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// KubeVirt's defaults for the settings of the KubeVirt object (kubevirt.io virt-config).
const (
	// DefaultParallelMigrationsPerCluster is KubeVirt's parallelMigrationsPerCluster.
	DefaultParallelMigrationsPerCluster uint32 = 5
	// DefaultParallelOutboundMigrationsPerNode is KubeVirt's parallelOutboundMigrationsPerNode.
	DefaultParallelOutboundMigrationsPerNode uint32 = 2
	// DefaultCompletionTimeoutPerGiB is KubeVirt's completionTimeoutPerGiB, in seconds.
	DefaultCompletionTimeoutPerGiB int64 = 150
	// DefaultProgressTimeout is KubeVirt's progressTimeout, in seconds.
	DefaultProgressTimeout int64 = 150
	// DefaultBatchEvictionSize is KubeVirt's workloadUpdateStrategy.batchEvictionSize.
	DefaultBatchEvictionSize int32 = 10
	// DefaultBatchEvictionInterval is KubeVirt's workloadUpdateStrategy.batchEvictionInterval.
	DefaultBatchEvictionInterval = time.Minute
)

// KubeVirtSettings are the settings of a KubeVirt object with KubeVirt's defaults in place of
// everything left unset: what controllers and node agents act on. The stored object keeps only
// what its users wrote, so a later change of a default reaches every installation.
type KubeVirtSettings struct {
	// Migrations are the live-migration limits and timeouts.
	Migrations MigrationSettings
	// UseEmulation allows software emulation (QEMU TCG) on nodes without usable KVM.
	UseEmulation bool
	// WorkloadUpdates says how guests in outdated launchers are moved to the current one.
	WorkloadUpdates WorkloadUpdateSettings
}

// WorkloadUpdateSettings is spec.workloadUpdateStrategy with every field set.
type WorkloadUpdateSettings struct {
	// LiveMigrate moves live-migratable guests by live migration.
	LiveMigrate bool
	// Evict evicts the launcher Pods of the guests not live-migrated.
	Evict bool
	// BatchEvictionSize is how many launcher Pods are evicted per BatchEvictionInterval.
	BatchEvictionSize int32
	// BatchEvictionInterval is the time between batches of evictions.
	BatchEvictionInterval time.Duration
}

// Enabled reports whether any workload update method is on.
func (s WorkloadUpdateSettings) Enabled() bool { return s.LiveMigrate || s.Evict }

// workloadUpdateSettingsOf returns the effective settings of strategy (nil: KubeVirt's defaults,
// no automated updates).
func workloadUpdateSettingsOf(strategy *v1.KubeVirtWorkloadUpdateStrategy) WorkloadUpdateSettings {
	out := WorkloadUpdateSettings{BatchEvictionSize: DefaultBatchEvictionSize, BatchEvictionInterval: DefaultBatchEvictionInterval}
	if strategy == nil {
		return out
	}
	out.LiveMigrate = slices.Contains(strategy.WorkloadUpdateMethods, v1.WorkloadUpdateMethodLiveMigrate)
	out.Evict = slices.Contains(strategy.WorkloadUpdateMethods, v1.WorkloadUpdateMethodEvict)
	if strategy.BatchEvictionSize != nil {
		out.BatchEvictionSize = *strategy.BatchEvictionSize
	}
	if strategy.BatchEvictionInterval != nil {
		out.BatchEvictionInterval = strategy.BatchEvictionInterval.Duration
	}
	return out
}

// MigrationSettings is spec.configuration.migrations with every field set.
type MigrationSettings struct {
	// ParallelMigrationsPerCluster is the most live migrations at once in the cluster.
	ParallelMigrationsPerCluster uint32
	// ParallelOutboundMigrationsPerNode is the most live migrations leaving one node at once.
	ParallelOutboundMigrationsPerNode uint32
	// BandwidthPerMigration is each migration's bandwidth limit in bytes per second; zero
	// means no limit (KubeVirt's default, 0Mi).
	BandwidthPerMigration resource.Quantity
	// CompletionTimeoutPerGiB is the seconds per GiB of guest memory a migration may take.
	CompletionTimeoutPerGiB int64
	// ProgressTimeout is the seconds a migration may go without transferring data.
	ProgressTimeout int64
	// AllowAutoConverge lets the platform throttle the guest so that its migration converges.
	AllowAutoConverge bool
	// AllowPostCopy lets a migration switch to post-copy at its completion timeout.
	AllowPostCopy bool
	// AllowWorkloadDisruption lets a migration disrupt the guest at its completion timeout
	// (post-copy, when allowed) instead of being cancelled; unset, it follows AllowPostCopy.
	AllowWorkloadDisruption *bool
}

// PostCopy reports whether a migration with these settings switches to post-copy at its
// completion timeout: post-copy is allowed and so is disrupting the guest.
func (s MigrationSettings) PostCopy() bool {
	return s.AllowPostCopy && (s.AllowWorkloadDisruption == nil || *s.AllowWorkloadDisruption)
}

// Configuration is s as KubeVirt reports it in a migration's state.
func (s MigrationSettings) Configuration() *v1.MigrationConfiguration {
	disruption := s.AllowPostCopy
	if s.AllowWorkloadDisruption != nil {
		disruption = *s.AllowWorkloadDisruption
	}
	return &v1.MigrationConfiguration{
		ParallelMigrationsPerCluster:      &s.ParallelMigrationsPerCluster,
		ParallelOutboundMigrationsPerNode: &s.ParallelOutboundMigrationsPerNode,
		BandwidthPerMigration:             new(s.BandwidthPerMigration.DeepCopy()),
		CompletionTimeoutPerGiB:           &s.CompletionTimeoutPerGiB,
		ProgressTimeout:                   &s.ProgressTimeout,
		AllowAutoConverge:                 &s.AllowAutoConverge,
		AllowPostCopy:                     &s.AllowPostCopy,
		AllowWorkloadDisruption:           &disruption,
	}
}

// KubeVirtSettingsOf returns kv's effective settings: what it sets, and KubeVirt's defaults for
// the rest. A nil kv (no KubeVirt object) yields KubeVirt's defaults. kv is not changed.
func KubeVirtSettingsOf(kv *v1.KubeVirt) KubeVirtSettings {
	out := KubeVirtSettings{Migrations: MigrationSettings{
		ParallelMigrationsPerCluster:      DefaultParallelMigrationsPerCluster,
		ParallelOutboundMigrationsPerNode: DefaultParallelOutboundMigrationsPerNode,
		BandwidthPerMigration:             resource.MustParse("0Mi"),
		CompletionTimeoutPerGiB:           DefaultCompletionTimeoutPerGiB,
		ProgressTimeout:                   DefaultProgressTimeout,
	}, WorkloadUpdates: workloadUpdateSettingsOf(nil)}
	if kv == nil {
		return out
	}
	out.WorkloadUpdates = workloadUpdateSettingsOf(kv.Spec.WorkloadUpdateStrategy)
	cfg := &kv.Spec.Configuration
	if d := cfg.DeveloperConfiguration; d != nil {
		out.UseEmulation = d.UseEmulation
	}
	if m := cfg.MigrationConfiguration; m != nil {
		out.Migrations.Apply(m)
	}
	return out
}

// Apply copies the fields m sets into out: the KubeVirt object's settings over the defaults, or
// a migration's configuration (its policy's settings) over the cluster's.
func (out *MigrationSettings) Apply(m *v1.MigrationConfiguration) {
	if m.ParallelMigrationsPerCluster != nil {
		out.ParallelMigrationsPerCluster = *m.ParallelMigrationsPerCluster
	}
	if m.ParallelOutboundMigrationsPerNode != nil {
		out.ParallelOutboundMigrationsPerNode = *m.ParallelOutboundMigrationsPerNode
	}
	if m.BandwidthPerMigration != nil {
		out.BandwidthPerMigration = m.BandwidthPerMigration.DeepCopy()
	}
	if m.CompletionTimeoutPerGiB != nil {
		out.CompletionTimeoutPerGiB = *m.CompletionTimeoutPerGiB
	}
	if m.ProgressTimeout != nil {
		out.ProgressTimeout = *m.ProgressTimeout
	}
	if m.AllowAutoConverge != nil {
		out.AllowAutoConverge = *m.AllowAutoConverge
	}
	if m.AllowPostCopy != nil {
		out.AllowPostCopy = *m.AllowPostCopy
	}
	if m.AllowWorkloadDisruption != nil {
		out.AllowWorkloadDisruption = new(*m.AllowWorkloadDisruption)
	}
}
