package localcluster

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestRecreateEnded: at `up`, a demo VMI that ended (its guest stopped with the nodes) is
// created anew; a running one, and any other kind, is left alone.
func TestRecreateEnded(t *testing.T) {
	vmis := schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	vmi := func(name, phase string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
			"metadata": map[string]any{"name": name, "namespace": "default", "uid": name + "-old"}}}
		if phase != "" {
			u.Object["status"] = map[string]any{"phase": phase}
		}
		return u
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{vmis: "VirtualMachineInstanceList"}, vmi("ended", "Failed"), vmi("running", "Running"))
	ri := client.Resource(vmis).Namespace("default")
	for name, recreated := range map[string]bool{"ended": true, "running": false} {
		want := vmi(name, "")
		want.SetUID("")
		if err := recreateEnded(t.Context(), ri, want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := ri.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, hasStatus := got.Object["status"]; hasStatus == recreated {
			t.Errorf("%s: recreated %v, want %v (%v)", name, !hasStatus, recreated, got.Object)
		}
	}
}
