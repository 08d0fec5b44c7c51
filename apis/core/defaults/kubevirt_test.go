package defaults

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// kubeVirtDefaults are KubeVirt's documented defaults (virt-config): 5 and 2 parallel
// migrations, no bandwidth limit, 150 s/GiB and 150 s progress timeouts, neither auto-converge
// nor post-copy, no software emulation, no automated workload updates (batches of 10 evictions
// a minute when they are on).
var kubeVirtDefaults = KubeVirtSettings{Migrations: MigrationSettings{
	ParallelMigrationsPerCluster:      5,
	ParallelOutboundMigrationsPerNode: 2,
	BandwidthPerMigration:             resource.MustParse("0"),
	CompletionTimeoutPerGiB:           150,
	ProgressTimeout:                   150,
}, WorkloadUpdates: WorkloadUpdateSettings{BatchEvictionSize: 10, BatchEvictionInterval: time.Minute}}

func TestKubeVirtSettingsOf(t *testing.T) {
	everything := kubeVirtDefaults
	everything.UseEmulation = true
	everything.Migrations = MigrationSettings{
		ParallelMigrationsPerCluster: 9, ParallelOutboundMigrationsPerNode: 3,
		BandwidthPerMigration:   resource.MustParse("64Mi"),
		CompletionTimeoutPerGiB: 800, ProgressTimeout: 0,
		AllowAutoConverge: true, AllowPostCopy: true,
	}
	evictInThrees := kubeVirtDefaults
	evictInThrees.WorkloadUpdates.Evict, evictInThrees.WorkloadUpdates.BatchEvictionSize = true, 3
	onlyBandwidth := kubeVirtDefaults
	onlyBandwidth.Migrations.BandwidthPerMigration = resource.MustParse("1Gi")
	cases := []struct {
		name string
		kv   *v1.KubeVirt
		want KubeVirtSettings
	}{
		{"no object", nil, kubeVirtDefaults},
		{"empty spec", &v1.KubeVirt{}, kubeVirtDefaults},
		{"empty sections", kubeVirt(&v1.MigrationConfiguration{}, &v1.DeveloperConfiguration{}), kubeVirtDefaults},
		{"one field", kubeVirt(&v1.MigrationConfiguration{BandwidthPerMigration: ptr.To(resource.MustParse("1Gi"))}, nil), onlyBandwidth},
		{"every field", kubeVirt(&v1.MigrationConfiguration{
			ParallelMigrationsPerCluster: ptr.To(uint32(9)), ParallelOutboundMigrationsPerNode: ptr.To(uint32(3)),
			BandwidthPerMigration:   ptr.To(resource.MustParse("64Mi")),
			CompletionTimeoutPerGiB: ptr.To(int64(800)), ProgressTimeout: ptr.To(int64(0)),
			AllowAutoConverge: ptr.To(true), AllowPostCopy: ptr.To(true),
		}, &v1.DeveloperConfiguration{UseEmulation: true}), everything},
		{"workload updates", &v1.KubeVirt{Spec: v1.KubeVirtSpec{WorkloadUpdateStrategy: &v1.KubeVirtWorkloadUpdateStrategy{
			WorkloadUpdateMethods: []v1.WorkloadUpdateMethod{v1.WorkloadUpdateMethodEvict}, BatchEvictionSize: ptr.To(int32(3)),
		}}}, evictInThrees},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before *v1.KubeVirt
			if c.kv != nil {
				before = c.kv.DeepCopy()
			}
			got := KubeVirtSettingsOf(c.kv)
			if !apiequality.Semantic.DeepEqual(got, c.want) {
				t.Errorf("settings (-want +got):\n%s", cmp.Diff(c.want, got, cmp.Comparer(quantityEqual)))
			}
			if c.kv != nil && !apiequality.Semantic.DeepEqual(before, c.kv) {
				t.Errorf("KubeVirtSettingsOf changed its argument: %+v", c.kv)
			}
		})
	}
}

// TestKubeVirtSettingsDoNotAlias checks that changing the returned bandwidth leaves the object alone.
func TestKubeVirtSettingsDoNotAlias(t *testing.T) {
	kv := kubeVirt(&v1.MigrationConfiguration{BandwidthPerMigration: ptr.To(resource.MustParse("64Mi"))}, nil)
	got := KubeVirtSettingsOf(kv)
	got.Migrations.BandwidthPerMigration.Add(resource.MustParse("1Mi"))
	if s := kv.Spec.Configuration.MigrationConfiguration.BandwidthPerMigration.String(); s != "64Mi" {
		t.Errorf("object's bandwidth became %s", s)
	}
}

func kubeVirt(m *v1.MigrationConfiguration, d *v1.DeveloperConfiguration) *v1.KubeVirt {
	return &v1.KubeVirt{Spec: v1.KubeVirtSpec{Configuration: v1.KubeVirtConfiguration{
		MigrationConfiguration: m, DeveloperConfiguration: d,
	}}}
}

func quantityEqual(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }
