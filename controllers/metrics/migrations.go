package metrics

import (
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// migrationPhaseTransition is KubeVirt's histogram of the time from a migration's creation to
// each phase it reaches (the VMI histogram's buckets, in seconds).
var migrationPhaseTransition = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Name:           "kubevirt_vmi_migration_phase_transition_time_from_creation_seconds",
	Help:           "Histogram of VM migration phase transitions duration from creation time in seconds.",
	Buckets:        []float64{0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 240, 300, 600, 1200, 1800, 3600},
	StabilityLevel: metrics.ALPHA,
}, []string{"phase"})

// KubeVirt's migration metrics, read from the migration lister at each scrape. Like KubeVirt's,
// the succeeded and failed ones are gauges: 1 for each migration that ended so (labels vmi,
// vmim, namespace), for as long as the migration object exists.
var (
	pendingMigrations = metrics.NewDesc("kubevirt_vmi_migrations_in_pending_phase", "Number of current pending migrations.",
		nil, nil, metrics.ALPHA, "")
	schedulingMigrations = metrics.NewDesc("kubevirt_vmi_migrations_in_scheduling_phase", "Number of current scheduling migrations.",
		nil, nil, metrics.ALPHA, "")
	runningMigrations = metrics.NewDesc("kubevirt_vmi_migrations_in_running_phase", "Number of current running migrations.",
		nil, nil, metrics.ALPHA, "")
	succeededMigration = metrics.NewDesc("kubevirt_vmi_migration_succeeded", "Indicates if the VMI migration succeeded.",
		[]string{"vmi", "vmim", "namespace"}, nil, metrics.ALPHA, "")
	failedMigration = metrics.NewDesc("kubevirt_vmi_migration_failed", "Indicates if the VMI migration failed.",
		[]string{"vmi", "vmim", "namespace"}, nil, metrics.ALPHA, "")
)

var registerMigrationsOnce sync.Once

// RegisterMigrations adds the migration metrics, read from the controller's lister at each
// scrape, and the phase transition histogram.
func RegisterMigrations(migrations vireolisters.VirtualMachineInstanceMigrationLister) {
	registerMigrationsOnce.Do(func() {
		legacyregistry.MustRegister(migrationPhaseTransition)
		legacyregistry.CustomMustRegister(&migrationCollector{migrations: migrations})
	})
}

// ObserveMigrationPhaseTransition is a migration informer's update handler: each phase a
// migration reached since the old object (one write may record several: a quick migration
// passes Scheduled..Running at once) adds the time from its creation to the histogram.
func ObserveMigrationPhaseTransition(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.VirtualMachineInstanceMigration)
	m, ok2 := newObj.(*v1.VirtualMachineInstanceMigration)
	if !ok1 || !ok2 || old.Status.Phase == m.Status.Phase || m.Status.Phase == "" {
		return
	}
	seen := map[v1.VirtualMachineInstanceMigrationPhase]bool{}
	for _, ts := range old.Status.PhaseTransitionTimestamps {
		seen[ts.Phase] = true
	}
	for _, ts := range m.Status.PhaseTransitionTimestamps {
		if seen[ts.Phase] {
			continue
		}
		seen[ts.Phase] = true
		d := ts.PhaseTransitionTimestamp.Sub(m.CreationTimestamp.Time)
		migrationPhaseTransition.WithLabelValues(string(ts.Phase)).Observe(max(d.Seconds(), 0))
	}
}

// migrationCollector reports the migration counts at scrape time.
type migrationCollector struct {
	metrics.BaseStableCollector
	migrations vireolisters.VirtualMachineInstanceMigrationLister
}

func (c *migrationCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- pendingMigrations
	ch <- schedulingMigrations
	ch <- runningMigrations
	ch <- succeededMigration
	ch <- failedMigration
}

// CollectWithStability counts as KubeVirt does: Scheduled, PreparingTarget and TargetReady
// migrations count as running.
func (c *migrationCollector) CollectWithStability(ch chan<- metrics.Metric) {
	ms, err := c.migrations.List(labels.Everything())
	if err != nil {
		return
	}
	pending, scheduling, running := 0, 0, 0
	for _, m := range ms {
		switch m.Status.Phase {
		case v1.MigrationPending:
			pending++
		case v1.MigrationScheduling:
			scheduling++
		case v1.MigrationScheduled, v1.MigrationPreparingTarget, v1.MigrationTargetReady, v1.MigrationRunning:
			running++
		case v1.MigrationSucceeded:
			ch <- metrics.NewLazyConstMetric(succeededMigration, metrics.GaugeValue, 1, m.Spec.VMIName, m.Name, m.Namespace)
		case v1.MigrationFailed:
			ch <- metrics.NewLazyConstMetric(failedMigration, metrics.GaugeValue, 1, m.Spec.VMIName, m.Name, m.Namespace)
		}
	}
	ch <- metrics.NewLazyConstMetric(pendingMigrations, metrics.GaugeValue, float64(pending))
	ch <- metrics.NewLazyConstMetric(schedulingMigrations, metrics.GaugeValue, float64(scheduling))
	ch <- metrics.NewLazyConstMetric(runningMigrations, metrics.GaugeValue, float64(running))
}
