package integration

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
)

// TestMigrationPolicies: migrations.kubevirt.io/v1alpha1 serves cluster-scoped MigrationPolicies
// (in discovery, outside namespaces and the "all" category); a policy is stored as written; one
// without selectors, with a negative completion timeout or with maxDowntimeMs (which KubeVirt
// takes only with feature gates Vireo lacks) is refused at the field.
func TestMigrationPolicies(t *testing.T) {
	ctx := context.Background()
	policies := server.Client.MigrationsV1alpha1().MigrationPolicies()
	bandwidth := resource.MustParse("64Mi")
	p := &v1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: v1alpha1.MigrationPolicySpec{
		Selectors:             &v1alpha1.Selectors{VirtualMachineInstanceSelector: v1alpha1.LabelSelector{"tier": "db"}},
		BandwidthPerMigration: &bandwidth, AllowPostCopy: new(true), CompletionTimeoutPerGiB: new(int64(300)),
	}}
	created, err := policies.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Namespace != "" || created.Spec.BandwidthPerMigration.String() != "64Mi" || *created.Spec.CompletionTimeoutPerGiB != 300 {
		t.Errorf("stored policy %+v", created)
	}
	for path, mutate := range map[string]func(*v1alpha1.MigrationPolicy){
		"spec.selectors":               func(p *v1alpha1.MigrationPolicy) { p.Spec.Selectors = nil },
		"spec.completionTimeoutPerGiB": func(p *v1alpha1.MigrationPolicy) { p.Spec.CompletionTimeoutPerGiB = new(int64(-1)) },
		"spec.maxDowntimeMs":           func(p *v1alpha1.MigrationPolicy) { p.Spec.MaxDowntimeMs = new(int64(300)) },
		"spec.selectors.namespaceSelector": func(p *v1alpha1.MigrationPolicy) {
			p.Spec.Selectors.NamespaceSelector = v1alpha1.LabelSelector{"bad key!": "x"}
		},
	} {
		bad := p.DeepCopy()
		bad.Name = "bad"
		mutate(bad)
		if _, err := policies.Create(ctx, bad, metav1.CreateOptions{}); err == nil || !hasCausePrefix(err, path) {
			t.Errorf("%s: %v, want an error there", path, err)
		}
	}
	list, err := server.Client.Discovery().ServerResourcesForGroupVersion("migrations.kubevirt.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range list.APIResources {
		if r.Name == "migrationpolicies" {
			found = true
			if r.Namespaced || slices.Contains(r.Categories, "all") || r.Kind != "MigrationPolicy" {
				t.Errorf("discovery of migrationpolicies: %+v, want cluster-scoped and outside \"all\"", r)
			}
		}
	}
	if !found {
		t.Errorf("discovery lacks migrationpolicies: %+v", list.APIResources)
	}
	if err := policies.Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
