package integration

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestV1alpha3ServesTheSameObjects: kubevirt.io/v1alpha3 is served as KubeVirt serves it (the
// same schema, with KubeVirt's deprecation warning): a VMI written in v1alpha3 reads back in v1
// and the other way round, and subresources.kubevirt.io/v1alpha3 is in discovery.
func TestV1alpha3ServesTheSameObjects(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	cfg := rest.CopyConfig(server.Config)
	seen := &warningRecorder{}
	cfg.WarningHandler = seen
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1alpha3", Resource: "virtualmachineinstances"}
	current := old
	current.Version = "v1"

	vmi := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1alpha3", "kind": "VirtualMachineInstance",
		"metadata": map[string]any{"name": "old"},
		"spec": map[string]any{
			"domain":  map[string]any{"resources": map[string]any{"requests": map[string]any{"memory": "64Mi"}}, "devices": map[string]any{}},
			"volumes": []any{map[string]any{"name": "root", "containerDisk": map[string]any{"image": "registry.local/tiny:1.0"}}},
		},
	}}
	if _, err := dyn.Resource(old).Namespace(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a VMI in v1alpha3: %v", err)
	}
	if !strings.Contains(seen.all(), "kubevirt.io/v1alpha3 is now deprecated") {
		t.Errorf("warnings %q, want KubeVirt's deprecation of kubevirt.io/v1alpha3", seen.all())
	}
	got, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, "old", metav1.GetOptions{})
	if err != nil || got.Spec.Volumes[0].ContainerDisk.Image != "registry.local/tiny:1.0" || got.Spec.Domain.Devices.Disks[0].Name != "root" {
		t.Fatalf("the v1alpha3 VMI read in v1: %+v, %v", got, err)
	}
	if _, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, newVMI("current"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := dyn.Resource(old).Namespace(ns).Get(ctx, "current", metav1.GetOptions{})
	if err != nil || back.GetAPIVersion() != "kubevirt.io/v1alpha3" {
		t.Fatalf("the v1 VMI read in v1alpha3: %v, %v", back, err)
	}
	list, err := dyn.Resource(old).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=old"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("v1alpha3 list with a field selector: %v, %v", list, err)
	}
	if _, err := dyn.Resource(current).Namespace(ns).Get(ctx, "old", metav1.GetOptions{}); err != nil {
		t.Errorf("v1 get: %v", err)
	}

	disc := server.Client.Discovery()
	for _, gv := range []string{"kubevirt.io/v1alpha3", "subresources.kubevirt.io/v1alpha3"} {
		if l, err := disc.ServerResourcesForGroupVersion(gv); err != nil || len(l.APIResources) == 0 {
			t.Errorf("discovery of %s: %+v, %v", gv, l, err)
		}
	}
	groups, err := disc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if (g.Name == "kubevirt.io" || g.Name == "subresources.kubevirt.io") && g.PreferredVersion.Version != "v1" {
			t.Errorf("group %s prefers %s, want v1", g.Name, g.PreferredVersion.Version)
		}
	}
}
