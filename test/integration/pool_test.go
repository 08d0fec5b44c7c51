package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

func newPool(name string) *v1beta1.VirtualMachinePool {
	labels := map[string]string{"kubevirt.io/vmpool": name}
	return &v1beta1.VirtualMachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.VirtualMachinePoolSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			VirtualMachineTemplate: &v1beta1.VirtualMachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.VirtualMachineSpec{RunStrategy: new(v1.RunStrategyAlways),
					Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: newVMI("unused").Spec}},
			},
		},
	}
}

// TestVirtualMachinePools: a pool gets one replica and its template a VM's defaults; invalid
// pools are refused at the field (selector, template, strategies, what Vireo cannot do yet);
// /scale reads and writes spec.replicas; v1alpha1 serves the same objects.
func TestVirtualMachinePools(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	pools := server.Client.PoolV1beta1().VirtualMachinePools(ns)
	p, err := pools.Create(ctx, newPool("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if p.Spec.Replicas == nil || *p.Spec.Replicas != 1 || p.Spec.VirtualMachineTemplate.Spec.Template.Spec.Architecture == "" {
		t.Errorf("defaults: replicas %v, template %+v", p.Spec.Replicas, p.Spec.VirtualMachineTemplate.Spec.Template.Spec)
	}
	offline := v1beta1.StatePreservation("Offline")
	for path, mutate := range map[string]func(*v1beta1.VirtualMachinePool){
		"spec.selector":               func(p *v1beta1.VirtualMachinePool) { p.Spec.Selector.MatchLabels = map[string]string{"x": "y"} },
		"spec.virtualMachineTemplate": func(p *v1beta1.VirtualMachinePool) { p.Spec.VirtualMachineTemplate = nil },
		"spec.virtualMachineTemplate.spec.runStrategy": func(p *v1beta1.VirtualMachinePool) {
			p.Spec.VirtualMachineTemplate.Spec.RunStrategy = nil
		},
		"spec.scaleInStrategy": func(p *v1beta1.VirtualMachinePool) {
			p.Spec.ScaleInStrategy = &v1beta1.VirtualMachinePoolScaleInStrategy{Unmanaged: &v1beta1.VirtualMachinePoolUnmanagedStrategy{},
				Proactive: &v1beta1.VirtualMachinePoolProactiveScaleInStrategy{}}
		},
		"spec.scaleInStrategy.opportunistic.statePreservation": func(p *v1beta1.VirtualMachinePool) {
			p.Spec.ScaleInStrategy = &v1beta1.VirtualMachinePoolScaleInStrategy{
				Opportunistic: &v1beta1.VirtualMachinePoolOpportunisticScaleInStrategy{StatePreservation: &offline}}
		},
		"spec.maxUnavailable": func(p *v1beta1.VirtualMachinePool) { p.Spec.MaxUnavailable = new(intstr.FromString("half")) },
	} {
		bad := newPool("bad")
		mutate(bad)
		if _, err := pools.Create(ctx, bad, metav1.CreateOptions{}); !hasCause(err, path) {
			t.Errorf("%s: %v, want an error there", path, err)
		}
	}
	scale, err := pools.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 1 {
		t.Fatalf("GetScale: %+v, %v", scale, err)
	}
	scale.Spec.Replicas = 4
	if _, err := pools.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("UpdateScale: %v", err)
	}
	if p, err = pools.Get(ctx, "web", metav1.GetOptions{}); err != nil || *p.Spec.Replicas != 4 {
		t.Fatalf("after scaling: %v, %v", p.Spec.Replicas, err)
	}
	dyn, err := dynamic.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	old := schema.GroupVersionResource{Group: "pool.kubevirt.io", Version: "v1alpha1", Resource: "virtualmachinepools"}
	if got, err := dyn.Resource(old).Namespace(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || got.GetAPIVersion() != "pool.kubevirt.io/v1alpha1" {
		t.Errorf("v1alpha1 get: %v, %v", got, err)
	}
}
