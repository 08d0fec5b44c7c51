package validation

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// validKubeVirt returns the installation's settings object with every setting Vireo knows.
func validKubeVirt() *v1.KubeVirt {
	return &v1.KubeVirt{
		ObjectMeta: metav1.ObjectMeta{Name: "kubevirt", Namespace: v1.InstallNamespace},
		Spec: v1.KubeVirtSpec{Configuration: v1.KubeVirtConfiguration{
			MigrationConfiguration: &v1.MigrationConfiguration{
				ParallelMigrationsPerCluster: ptr.To(uint32(5)), ParallelOutboundMigrationsPerNode: ptr.To(uint32(1)),
				BandwidthPerMigration: qp("64Mi"), CompletionTimeoutPerGiB: ptr.To(int64(0)), ProgressTimeout: ptr.To(int64(150)),
				AllowAutoConverge: ptr.To(true), AllowPostCopy: ptr.To(false),
			},
			DeveloperConfiguration: &v1.DeveloperConfiguration{UseEmulation: true},
		}},
	}
}

func TestValidateKubeVirt(t *testing.T) {
	mig := "spec.configuration.migrations"
	cases := []struct {
		name   string
		mutate func(kv *v1.KubeVirt)
		want   []fe
	}{
		{name: "valid"},
		{name: "empty spec", mutate: func(kv *v1.KubeVirt) { kv.Spec = v1.KubeVirtSpec{} }},
		{name: "empty migrations", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.Configuration.MigrationConfiguration = &v1.MigrationConfiguration{}
		}},
		{name: "another namespace", mutate: func(kv *v1.KubeVirt) { kv.Namespace = "kubevirt" },
			want: []fe{{invalid, "metadata.namespace"}}},
		{name: "no name", mutate: func(kv *v1.KubeVirt) { kv.Name = "" },
			want: []fe{{required, "metadata.name"}}},
		{name: "zero parallel limits", mutate: func(kv *v1.KubeVirt) {
			m := kv.Spec.Configuration.MigrationConfiguration
			m.ParallelMigrationsPerCluster, m.ParallelOutboundMigrationsPerNode = ptr.To(uint32(0)), ptr.To(uint32(0))
		}, want: []fe{{invalid, mig + ".parallelMigrationsPerCluster"}, {invalid, mig + ".parallelOutboundMigrationsPerNode"}}},
		{name: "negative timeouts", mutate: func(kv *v1.KubeVirt) {
			m := kv.Spec.Configuration.MigrationConfiguration
			m.CompletionTimeoutPerGiB, m.ProgressTimeout = ptr.To(int64(-1)), ptr.To(int64(-150))
		}, want: []fe{{invalid, mig + ".completionTimeoutPerGiB"}, {invalid, mig + ".progressTimeout"}}},
		{name: "zero bandwidth, KubeVirt's default: no limit", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.Configuration.MigrationConfiguration.BandwidthPerMigration = qp("0Mi")
		}},
		{name: "negative bandwidth", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.Configuration.MigrationConfiguration.BandwidthPerMigration = qp("-1Mi")
		}, want: []fe{{invalid, mig + ".bandwidthPerMigration"}}},
		{name: "workload updates", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.WorkloadUpdateStrategy = &v1.KubeVirtWorkloadUpdateStrategy{
				WorkloadUpdateMethods: []v1.WorkloadUpdateMethod{v1.WorkloadUpdateMethodLiveMigrate, v1.WorkloadUpdateMethodEvict},
				BatchEvictionSize:     ptr.To(int32(0)), BatchEvictionInterval: &metav1.Duration{},
			}
		}},
		{name: "bad workload updates", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.WorkloadUpdateStrategy = &v1.KubeVirtWorkloadUpdateStrategy{
				WorkloadUpdateMethods: []v1.WorkloadUpdateMethod{"Evict", "Restart", "Evict"},
				BatchEvictionSize:     ptr.To(int32(-1)), BatchEvictionInterval: &metav1.Duration{Duration: -time.Second},
			}
		}, want: []fe{{notSupported, "spec.workloadUpdateStrategy.workloadUpdateMethods[1]"}, {duplicate, "spec.workloadUpdateStrategy.workloadUpdateMethods[2]"},
			{invalid, "spec.workloadUpdateStrategy.batchEvictionSize"}, {invalid, "spec.workloadUpdateStrategy.batchEvictionInterval"}}},
		{name: "tiny bandwidth", mutate: func(kv *v1.KubeVirt) {
			kv.Spec.Configuration.MigrationConfiguration.BandwidthPerMigration = qp("1")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := validKubeVirt()
			if c.mutate != nil {
				c.mutate(kv)
			}
			expectErrors(t, ValidateKubeVirt(kv), c.want...)
			if len(c.want) > 0 && c.want[0].path != "metadata.namespace" && c.want[0].path != "metadata.name" {
				old := validKubeVirt()
				old.ResourceVersion, kv.ResourceVersion = "1", "1"
				expectErrors(t, ValidateKubeVirtUpdate(kv, old), c.want...)
			}
		})
	}
}

func TestKubeVirtNamespaceErrorSaysWhere(t *testing.T) {
	kv := validKubeVirt()
	kv.Namespace = "default"
	errs := ValidateKubeVirt(kv)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "namespace vireo-system") {
		t.Fatalf("errors %v, want one naming namespace vireo-system", errs)
	}
}

func TestValidateKubeVirtStatusUpdate(t *testing.T) {
	st := "status"
	cases := []struct {
		name   string
		status v1.KubeVirtStatus
		want   []fe
	}{
		{name: "empty"},
		{name: "deployed", status: v1.KubeVirtStatus{Phase: v1.KubeVirtPhaseDeployed, ObservedGeneration: ptr.To(int64(3)),
			Conditions: []v1.KubeVirtCondition{{Type: v1.KubeVirtConditionAvailable, Status: v1.ConditionTrue}}}},
		{name: "unknown phase", status: v1.KubeVirtStatus{Phase: "Running"}, want: []fe{{notSupported, st + ".phase"}}},
		{name: "duplicate condition", status: v1.KubeVirtStatus{Conditions: []v1.KubeVirtCondition{
			{Type: v1.KubeVirtConditionAvailable, Status: v1.ConditionTrue},
			{Type: v1.KubeVirtConditionAvailable, Status: v1.ConditionFalse},
		}}, want: []fe{{duplicate, st + ".conditions[1].type"}}},
		{name: "future generation", status: v1.KubeVirtStatus{ObservedGeneration: ptr.To(int64(4))},
			want: []fe{{invalid, st + ".observedGeneration"}}},
		{name: "negative generation", status: v1.KubeVirtStatus{ObservedGeneration: ptr.To(int64(-1))},
			want: []fe{{invalid, st + ".observedGeneration"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := validKubeVirt()
			kv.Generation = 3
			kv.Status = c.status
			expectErrors(t, ValidateKubeVirtStatusUpdate(kv, validKubeVirt()), c.want...)
		})
	}
}
