package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
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

// TestVMWithInstancetype: a VM may name an instancetype and a preference instead of giving its
// CPUs and memory; one that sets what its instancetype sets is refused with KubeVirt's message
// naming the fields; one naming an instancetype that does not exist yet is accepted, as in
// KubeVirt; expand-spec shows the VM with its instancetype applied.
func TestVMWithInstancetype(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	it := server.Client.InstancetypeV1beta1()
	if _, err := it.VirtualMachineInstancetypes(ns).Create(ctx, &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec: v1beta1.VirtualMachineInstancetypeSpec{CPU: v1beta1.CPUInstancetype{Guest: 2},
			Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("128Mi")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := func(name string, mutate func(*v1.VirtualMachine)) error {
		o := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.VirtualMachineSpec{
			RunStrategy:  new(v1.RunStrategyHalted),
			Instancetype: &v1.InstancetypeMatcher{Name: "small", Kind: "VirtualMachineInstancetype"},
			Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{
				Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"}}}},
			}},
		}}
		mutate(o)
		_, err := server.Client.KubevirtV1().VirtualMachines(ns).Create(ctx, o, metav1.CreateOptions{})
		return err
	}
	if err := vm("sized", func(*v1.VirtualMachine) {}); err != nil {
		t.Fatalf("a VM sized by its instancetype: %v", err)
	}
	// expand-spec: the stored VM, and (expand-vm-spec) one sent in the body.
	rc := server.Client.KubevirtV1().RESTClient()
	for _, req := range []*rest.Request{
		rc.Get().AbsPath("/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/sized/expand-spec"),
		rc.Get().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/sized/expand-spec"),
		rc.Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/expand-vm-spec").Body([]byte(
			`{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"unsaved"},"spec":{"instancetype":{"kind":"VirtualMachineInstancetype","name":"small"},"template":{"spec":{}}}}`)),
	} {
		body, err := req.DoRaw(ctx)
		expanded := &v1.VirtualMachine{}
		if err == nil {
			err = json.Unmarshal(body, expanded)
		}
		if err != nil || expanded.Spec.Instancetype != nil || expanded.Spec.Template.Spec.Domain.CPU.Sockets != 2 ||
			expanded.Spec.Template.Spec.Domain.Memory.Guest.String() != "128Mi" {
			t.Errorf("expand-spec: %s, %v", body, err)
		}
	}
	err := vm("conflict", func(o *v1.VirtualMachine) { o.Spec.Template.Spec.Domain.CPU = &v1.CPU{Sockets: 2} })
	if !hasCause(err, "spec.template.spec.domain.cpu.sockets") ||
		!strings.Contains(err.Error(), "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type") {
		t.Errorf("a VM setting sockets too: %v", err)
	}
	// As in KubeVirt, a VM may name what does not exist yet (manifests apply in any order).
	if err := vm("later", func(o *v1.VirtualMachine) {
		o.Spec.Instancetype.Name = "huge"
		o.Spec.Preference = &v1.PreferenceMatcher{Name: "nope-" + ns}
	}); err != nil {
		t.Errorf("a VM naming an instancetype and a preference that do not exist yet: %v", err)
	}
}
