package integration

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// TestInstancetypesAndPreferences: instancetype.kubevirt.io/v1beta1 serves the four kinds with
// KubeVirt's short names and scopes (the cluster-wide ones outside namespaces and "all"); an
// instancetype without vCPUs or memory, or a preference with an unknown topology, is refused at
// the field.
func TestInstancetypesAndPreferences(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	it := server.Client.InstancetypeV1beta1()
	spec := v1beta1.VirtualMachineInstancetypeSpec{CPU: v1beta1.CPUInstancetype{Guest: 2},
		Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("1Gi")}}
	if _, err := it.VirtualMachineInstancetypes(ns).Create(ctx, &v1beta1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "small"}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create instancetype: %v", err)
	}
	cluster, err := it.VirtualMachineClusterInstancetypes().Create(ctx, &v1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small-" + ns}, Spec: spec}, metav1.CreateOptions{})
	if err != nil || cluster.Namespace != "" {
		t.Fatalf("create cluster instancetype: %+v, %v", cluster, err)
	}
	t.Cleanup(func() { _ = it.VirtualMachineClusterInstancetypes().Delete(ctx, cluster.Name, metav1.DeleteOptions{}) })
	bad := &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}
	if _, err := it.VirtualMachineInstancetypes(ns).Create(ctx, bad, metav1.CreateOptions{}); !hasCause(err, "spec.cpu.guest") || !hasCause(err, "spec.memory.guest") {
		t.Errorf("an empty instancetype: %v, want errors at spec.cpu.guest and spec.memory.guest", err)
	}
	topology := v1beta1.PreferredCPUTopology("diagonal")
	pref := &v1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: "bad-" + ns},
		Spec: v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{PreferredCPUTopology: &topology}}}
	if _, err := it.VirtualMachineClusterPreferences().Create(ctx, pref, metav1.CreateOptions{}); !hasCause(err, "spec.cpu.preferredCPUTopology") {
		t.Errorf("an unknown topology: %v", err)
	}
	if _, err := it.VirtualMachinePreferences(ns).Create(ctx, &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "linux"},
		Spec: v1beta1.VirtualMachinePreferenceSpec{Devices: &v1beta1.DevicePreferences{PreferredDiskBus: "virtio"}}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create preference: %v", err)
	}

	list, err := server.Client.Discovery().ServerResourcesForGroupVersion("instancetype.kubevirt.io/v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		short      []string
		namespaced bool
	}{
		"virtualmachineinstancetypes":        {[]string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"}, true},
		"virtualmachineclusterinstancetypes": {[]string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}, false},
		"virtualmachinepreferences":          {[]string{"vmpref", "vmprefs", "vmp", "vmps"}, true},
		"virtualmachineclusterpreferences":   {[]string{"vmcp", "vmcps"}, false},
	}
	for _, r := range list.APIResources {
		w, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected resource %s", r.Name)
			continue
		}
		delete(want, r.Name)
		if !slices.Equal(r.ShortNames, w.short) || r.Namespaced != w.namespaced || slices.Contains(r.Categories, "all") != w.namespaced {
			t.Errorf("%s: short names %v namespaced %v categories %v", r.Name, r.ShortNames, r.Namespaced, r.Categories)
		}
	}
	if len(want) > 0 {
		t.Errorf("discovery lacks %v", want)
	}
}
