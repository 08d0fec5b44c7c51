package integration

import (
	"context"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// newReplicaSet returns a replica set of newVMI's spec whose selector matches its template.
func newReplicaSet(name string, replicas *int32) *v1.VirtualMachineInstanceReplicaSet {
	labels := map[string]string{"kubevirt.io/vmReplicaSet": name}
	return &v1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       newVMI("unused").Spec,
			},
		},
	}
}

// TestReplicaSetDefaultsValidationAndScale: a replica set gets one replica by default; one whose
// selector does not match its template, with negative replicas or with a reserved template label
// is refused at the field; /scale reads and writes spec.replicas as an autoscaling/v1 Scale (the
// status replicas and selector too), and v1alpha3 serves the same objects.
func TestReplicaSetDefaultsValidationAndScale(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	sets := server.Client.KubevirtV1().VirtualMachineInstanceReplicaSets(ns)
	rs, err := sets.Create(ctx, newReplicaSet("web", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 1 || rs.Spec.Template.Spec.Architecture == "" {
		t.Errorf("defaults: replicas %v, architecture %q; want 1 and the default architecture", rs.Spec.Replicas, rs.Spec.Template.Spec.Architecture)
	}

	bad := newReplicaSet("mismatch", nil)
	bad.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	if _, err := sets.Create(ctx, bad, metav1.CreateOptions{}); !hasCause(err, "spec.selector") {
		t.Errorf("selector not matching the template: %v, want an error at spec.selector", err)
	}
	negative := int32(-1)
	if _, err := sets.Create(ctx, newReplicaSet("negative", &negative), metav1.CreateOptions{}); !hasCause(err, "spec.replicas") {
		t.Errorf("negative replicas: %v, want an error at spec.replicas", err)
	}
	alice, err := versioned.NewForConfig(server.ImpersonatedConfig("alice"))
	if err != nil {
		t.Fatal(err)
	}
	reserved := newReplicaSet("reserved", nil)
	reserved.Spec.Template.ObjectMeta.Labels[v1.NodeNameLabel] = "node-1"
	if _, err := alice.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Create(ctx, reserved, metav1.CreateOptions{}); !hasCause(err, "spec.template.metadata.labels[kubevirt.io/nodeName]") {
		t.Errorf("reserved template label: %v, want an error at the label", err)
	}

	scale, err := sets.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 1 || scale.Name != "web" {
		t.Fatalf("GetScale: %+v, %v", scale, err)
	}
	scale.Spec.Replicas = 3
	if _, err := sets.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateScale: %v", err)
	}
	rs, err = sets.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *rs.Spec.Replicas != 3 || rs.Generation != 2 {
		t.Fatalf("after scaling to 3: replicas %v generation %d, %v", rs.Spec.Replicas, rs.Generation, err)
	}
	// A negative count is refused as such (a fresh Scale, so no conflict can stand in for it).
	if scale, err = sets.GetScale(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = -2
	if _, err := sets.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("scaling to -2: %v, want a bad request naming spec.replicas", err)
	}
	// A merge patch of /scale, as kubectl scale sends it.
	patched, err := server.Client.KubevirtV1().RESTClient().Patch(types.MergePatchType).Namespace(ns).
		Resource("virtualmachineinstancereplicasets").Name("web").SubResource("scale").
		Body([]byte(`{"spec":{"replicas":0}}`)).DoRaw(ctx)
	if err != nil || !strings.Contains(string(patched), `"kind":"Scale"`) {
		t.Fatalf("merge patch of /scale: %s, %v", patched, err)
	}
	if rs, err = sets.Get(ctx, "web", metav1.GetOptions{}); err != nil || *rs.Spec.Replicas != 0 {
		t.Fatalf("after patching /scale to 0: %v, %v", rs.Spec.Replicas, err)
	}
	rs.Status.Replicas, rs.Status.LabelSelector = 2, "kubevirt.io/vmReplicaSet=web"
	if _, err := sets.UpdateStatus(ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	scale, err = sets.GetScale(ctx, "web", metav1.GetOptions{})
	want := autoscalingv1.ScaleStatus{Replicas: 2, Selector: "kubevirt.io/vmReplicaSet=web"}
	if err != nil || scale.Status != want {
		t.Errorf("scale status %+v, want %+v (%v)", scale.Status, want, err)
	}

	dyn, err := dynamic.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	old := schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1alpha3", Resource: "virtualmachineinstancereplicasets"}
	got, err := dyn.Resource(old).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.GetAPIVersion() != "kubevirt.io/v1alpha3" {
		t.Errorf("v1alpha3 get: %v, %v", got, err)
	}
	if _, err := dyn.Resource(old).Namespace(ns).Get(ctx, "web", metav1.GetOptions{}, "scale"); err != nil {
		t.Errorf("v1alpha3 /scale: %v", err)
	}
}
