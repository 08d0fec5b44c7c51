package integration

import (
	"context"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	instancetypev1beta1 "github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	migrationsv1alpha1 "github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	poolv1beta1 "github.com/vireo-dev/vireo/apis/pool/v1beta1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/generated/clientset/versioned/scheme"
	"github.com/vireo-dev/vireo/internal/apiclient"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
)

// TestEveryGroupSpeaksProtobuf writes an object of every group with a clientset that sends
// protobuf bodies, reads each back in protobuf and in JSON, and checks both answers carry the
// same object; then watches as Vireo's components do (protobuf answers, JSON requests).
func TestEveryGroupSpeaksProtobuf(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	sendsProtobuf := rest.CopyConfig(server.Config)
	sendsProtobuf.ContentType = runtime.ContentTypeProtobuf
	pb, err := versioned.NewForConfig(sendsProtobuf)
	if err != nil {
		t.Fatal(err)
	}
	components, err := versioned.NewForConfig(apiclient.PreferProtobuf(server.Config))
	if err != nil {
		t.Fatal(err)
	}
	vmi, err := pb.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, newVMI("pb"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a VMI in protobuf: %v", err)
	}
	if vmi.Spec.Domain.Resources.Requests.Memory().String() != "64Mi" || vmi.UID == "" {
		t.Errorf("the VMI created in protobuf came back as %+v", vmi.Spec.Domain.Resources)
	}
	dv, err := pb.CdiV1beta1().DataVolumes(ns).Create(ctx, &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "pb"},
		Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://images.example/disk.img"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{"storage": resource.MustParse("1Gi")}}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Errorf("creating a DataVolume in protobuf: %v", err)
	}
	spec := instancetypev1beta1.VirtualMachineInstancetypeSpec{CPU: instancetypev1beta1.CPUInstancetype{Guest: 1},
		Memory: instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("1Gi"), OvercommitPercent: 10}}
	if _, err := pb.InstancetypeV1beta1().VirtualMachineInstancetypes(ns).Create(ctx, &instancetypev1beta1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "pb"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating an instancetype in protobuf: %v", err)
	}
	policy, err := pb.MigrationsV1alpha1().MigrationPolicies().Create(ctx, &migrationsv1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "pb-" + ns},
		Spec: migrationsv1alpha1.MigrationPolicySpec{Selectors: &migrationsv1alpha1.Selectors{}, AllowPostCopy: new(true)}}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("creating a migration policy in protobuf: %v", err)
	} else {
		t.Cleanup(func() {
			_ = pb.MigrationsV1alpha1().MigrationPolicies().Delete(ctx, policy.Name, metav1.DeleteOptions{})
		})
	}
	if _, err := pb.PoolV1beta1().VirtualMachinePools(ns).Create(ctx, newPool("pb"), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a pool in protobuf: %v", err)
	}

	base := "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances"
	inProtobuf := getAs(t, base+"/pb", runtime.ContentTypeProtobuf)
	inJSON := getAs(t, base+"/pb", runtime.ContentTypeJSON)
	if !apiequality.Semantic.DeepEqual(inProtobuf, inJSON) {
		t.Errorf("the VMI in protobuf and in JSON differ:\n%+v\n%+v", inProtobuf, inJSON)
	}
	list, ok := getAs(t, base, runtime.ContentTypeProtobuf).(*v1.VirtualMachineInstanceList)
	if !ok || len(list.Items) != 1 || list.Items[0].Name != "pb" {
		t.Errorf("the list in protobuf: %+v", list)
	}
	if dv != nil {
		got := getAs(t, "/apis/cdi.kubevirt.io/v1beta1/namespaces/"+ns+"/datavolumes/pb", runtime.ContentTypeProtobuf)
		if d, ok := got.(*cdiv1beta1.DataVolume); !ok || d.UID != dv.UID || d.Spec.Source.HTTP.URL != dv.Spec.Source.HTTP.URL {
			t.Errorf("the DataVolume in protobuf: %+v", got)
		}
	}
	if got, ok := getAs(t, "/apis/pool.kubevirt.io/v1beta1/namespaces/"+ns+"/virtualmachinepools/pb", runtime.ContentTypeProtobuf).(*poolv1beta1.VirtualMachinePool); !ok || got.Name != "pb" {
		t.Errorf("the pool in protobuf: %+v", got)
	}

	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w, err := components.KubevirtV1().VirtualMachineInstances(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watching in protobuf: %v", err)
	}
	defer w.Stop()
	if _, err := components.KubevirtV1().VirtualMachineInstances(ns).Patch(ctx, "pb", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"seen":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if got, ok := ev.Object.(*v1.VirtualMachineInstance); !ok || got.Labels["seen"] != "yes" {
			t.Errorf("the protobuf watch delivered %s %+v", ev.Type, ev.Object)
		}
	case <-wctx.Done():
		t.Error("the protobuf watch delivered nothing")
	}
}

// getAs reads path asking for contentType only, checks the answer is in it, and decodes it.
func getAs(t *testing.T, path, contentType string) runtime.Object {
	t.Helper()
	hc, err := rest.HTTPClientFor(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	body, err := apimetrics.GetAs(context.Background(), hc, server.Config.Host+path, contentType)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("decoding %s as %s: %v", path, contentType, err)
	}
	return obj
}
