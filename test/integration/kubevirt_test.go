package integration

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	applyv1 "github.com/vireo-dev/vireo/generated/applyconfiguration/core/v1"
)

// TestKubeVirtSettingsObject covers the life of the installation's one KubeVirt object through
// the API: served with KubeVirt's short names and columns, Deployed on creation, stored as
// written, applied server-side, validated with field paths, and kept to one in vireo-system.
func TestKubeVirtSettingsObject(t *testing.T) {
	ctx := context.Background()
	kvs := server.Client.KubevirtV1().KubeVirts(v1.InstallNamespace)
	t.Cleanup(func() { _ = kvs.Delete(context.Background(), "kubevirt", metav1.DeleteOptions{}) })

	list, err := server.Client.Discovery().ServerResourcesForGroupVersion("kubevirt.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "kubevirts" })
	if i < 0 || !slices.Equal(list.APIResources[i].ShortNames, []string{"kv", "kvs"}) || !list.APIResources[i].Namespaced ||
		list.APIResources[i].Kind != "KubeVirt" {
		t.Fatalf("discovery of kubevirts: %+v", list.APIResources)
	}

	// Server-side apply, as `kubectl apply --server-side` and vireo-local do.
	cfg := applyv1.KubeVirt("kubevirt", v1.InstallNamespace).WithSpec(applyv1.KubeVirtSpec().WithConfiguration(
		applyv1.KubeVirtConfiguration().
			WithDeveloperConfiguration(applyv1.DeveloperConfiguration().WithUseEmulation(true)).
			WithMigrationConfiguration(applyv1.MigrationConfiguration().WithParallelMigrationsPerCluster(3))))
	kv, err := kvs.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "installer"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if kv.Status.Phase != v1.KubeVirtPhaseDeployed || len(kv.Status.Conditions) != 1 || kv.Status.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("status after create %+v, want Deployed and Available", kv.Status)
	}
	m := kv.Spec.Configuration.MigrationConfiguration
	if m == nil || *m.ParallelMigrationsPerCluster != 3 || m.ProgressTimeout != nil || !kv.Spec.Configuration.DeveloperConfiguration.UseEmulation {
		t.Errorf("spec %+v: want it stored as written, without defaults", kv.Spec.Configuration)
	}

	table := getTable(t, "/apis/kubevirt.io/v1/namespaces/"+v1.InstallNamespace+"/kubevirts")
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if strings.Join(cols, " ") != "Name Age Phase" || len(table.Rows) != 1 || table.Rows[0].Cells[2] != "Deployed" {
		t.Errorf("table columns %v rows %+v, want KubeVirt's Name Age Phase and one Deployed row", cols, table.Rows)
	}

	// A merge patch, as `kubectl patch --type merge`, changes one setting and the generation.
	patched, err := kvs.Patch(ctx, "kubevirt", types.MergePatchType,
		[]byte(`{"spec":{"configuration":{"developerConfiguration":{"useEmulation":false}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if patched.Spec.Configuration.DeveloperConfiguration.UseEmulation || patched.Generation != kv.Generation+1 ||
		patched.Status.Phase != v1.KubeVirtPhaseDeployed {
		t.Errorf("after patch: useEmulation %v generation %d status %+v", patched.Spec.Configuration.DeveloperConfiguration.UseEmulation,
			patched.Generation, patched.Status)
	}

	// The controller records the generation it took up through /status.
	acked, err := kvs.Patch(ctx, "kubevirt", types.MergePatchType,
		[]byte(`{"status":{"observedGeneration":`+strconv.FormatInt(patched.Generation, 10)+`}}`), metav1.PatchOptions{}, "status")
	if err != nil || acked.Status.ObservedGeneration == nil || *acked.Status.ObservedGeneration != patched.Generation {
		t.Errorf("status patch: %v, %+v", err, acked)
	}
	if _, err := kvs.Patch(ctx, "kubevirt", types.MergePatchType, []byte(`{"status":{"observedGeneration":99}}`), metav1.PatchOptions{}, "status"); !apierrors.IsInvalid(err) {
		t.Errorf("observedGeneration beyond the generation: %v, want Invalid", err)
	}

	_, err = kvs.Patch(ctx, "kubevirt", types.MergePatchType,
		[]byte(`{"spec":{"configuration":{"migrations":{"progressTimeout":-1,"parallelOutboundMigrationsPerNode":0,"bandwidthPerMigration":"-1Mi"}}}}`), metav1.PatchOptions{})
	for _, path := range []string{"spec.configuration.migrations.progressTimeout", "spec.configuration.migrations.parallelOutboundMigrationsPerNode",
		"spec.configuration.migrations.bandwidthPerMigration"} {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), path) {
			t.Errorf("invalid settings: %v, want an error naming %s", err, path)
		}
	}
}

func TestOnlyOneKubeVirtObjectInVireoSystem(t *testing.T) {
	ctx := context.Background()
	kvs := server.Client.KubevirtV1().KubeVirts(v1.InstallNamespace)
	first := &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt"}}
	if _, err := kvs.Create(ctx, first, metav1.CreateOptions{}); err != nil {
		t.Fatalf("first: %v", err)
	}
	t.Cleanup(func() { _ = kvs.Delete(context.Background(), "kubevirt", metav1.DeleteOptions{}) })

	_, err := kvs.Create(ctx, &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "second"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Vireo honours only one KubeVirt object") ||
		!strings.Contains(err.Error(), "vireo-system/kubevirt") {
		t.Errorf("second object: %v, want a refusal naming the existing one", err)
	}
	_, err = server.Client.KubevirtV1().KubeVirts("default").Create(ctx, &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "namespace vireo-system") {
		t.Errorf("object in default: %v, want a refusal naming vireo-system", err)
	}
	if _, err := kvs.Create(ctx, first, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("the same name again: %v, want AlreadyExists", err)
	}

	// Once the first is gone, another name may take its place.
	if err := kvs.Delete(ctx, "kubevirt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kvs.Create(ctx, &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "second"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a new object after the old one was deleted: %v", err)
	}
	_ = kvs.Delete(ctx, "second", metav1.DeleteOptions{})
}
