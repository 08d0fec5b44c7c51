package integration

import (
	"context"
	"strings"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/infer"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	"github.com/vireo-dev/vireo/localcluster"
)

// TestCommonInstancetypes: objects shaped as KubeVirt's common-instancetypes bundle (general
// purpose, overcommitted, dedicated, realtime; Linux, s390x and Windows preferences) apply, apply
// again, and read back as written; VMs using them are admitted or refused as KubeVirt's
// admission decides: u1.nano is short of fedora's 2Gi, the s390x preference sets the template's
// architecture it then requires.
func TestCommonInstancetypes(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	objs, err := localcluster.ReadManifests("../testdata/common-instancetypes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	applier, err := localcluster.NewApplier(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	api := server.Client.InstancetypeV1beta1()
	t.Cleanup(func() {
		for _, o := range objs {
			_ = api.VirtualMachineClusterInstancetypes().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			_ = api.VirtualMachineClusterPreferences().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
	})
	for range 2 {
		if err := applier.Apply(ctx, objs, ""); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	for _, o := range objs {
		var want, got any
		var err error
		switch o.GetKind() {
		case "VirtualMachineClusterInstancetype":
			want, got = &v1beta1.VirtualMachineInstancetypeSpec{}, &v1beta1.VirtualMachineInstancetypeSpec{}
			var stored *v1beta1.VirtualMachineClusterInstancetype
			if stored, err = api.VirtualMachineClusterInstancetypes().Get(ctx, o.GetName(), metav1.GetOptions{}); err == nil {
				got = &stored.Spec
			}
		default:
			want = &v1beta1.VirtualMachinePreferenceSpec{}
			var stored *v1beta1.VirtualMachineClusterPreference
			if stored, err = api.VirtualMachineClusterPreferences().Get(ctx, o.GetName(), metav1.GetOptions{}); err == nil {
				got = &stored.Spec
			}
		}
		if err != nil {
			t.Fatalf("get %s: %v", o.GetName(), err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object["spec"].(map[string]any), want); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(want, got) {
			t.Errorf("%s %s reads back as %+v, want %+v", o.GetKind(), o.GetName(), got, want)
		}
	}

	vm := func(instancetype, preference string) (*v1.VirtualMachine, error) {
		return server.Client.KubevirtV1().VirtualMachines(ns).Create(ctx, &v1.VirtualMachine{
			ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(instancetype+"-"+preference, ".", "-")},
			Spec: v1.VirtualMachineSpec{
				RunStrategy:  new(v1.RunStrategyHalted),
				Instancetype: &v1.InstancetypeMatcher{Name: instancetype},
				Preference:   &v1.PreferenceMatcher{Name: preference},
				Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{
					Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"}}}},
				}},
			}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
	for _, ok := range [][2]string{{"u1.nano", "alpine"}, {"u1.large", "fedora"}, {"u1.large", "windows.11"}, {"o1.nano", "alpine"}} {
		if _, err := vm(ok[0], ok[1]); err != nil {
			t.Errorf("%s with %s: %v", ok[0], ok[1], err)
		}
	}
	if s390x, err := vm("u1.large", "rhel.9.s390x.secex"); err != nil || s390x.Spec.Template.Spec.Architecture != "s390x" {
		t.Errorf("u1.large with the s390x preference: %v, want admitted with its architecture", err)
	}
	_, err = vm("u1.nano", "fedora")
	if !hasCause(err, "spec.instancetype") || !strings.Contains(err.Error(),
		"failure checking preference requirements: insufficient Memory resources of 512Mi provided by instance type, preference requires 2Gi") {
		t.Errorf("u1.nano with fedora: %v, want fedora's memory requirement refused", err)
	}
}

// TestVMInfersFromDataVolume: a VM inferring its instancetype and preference from a labelled
// DataVolume is stored with their names, and with the preference's machine type in its template
// (written before the default); a VM inferring from a volume it does not have is refused naming
// the matcher; a VM short of its preference's vCPUs is refused with KubeVirt's message.
func TestVMInfersFromDataVolume(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	api := server.Client.InstancetypeV1beta1()
	if _, err := api.VirtualMachineInstancetypes(ns).Create(ctx, &v1beta1.VirtualMachineInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec: v1beta1.VirtualMachineInstancetypeSpec{CPU: v1beta1.CPUInstancetype{Guest: 2}, Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("256Mi")}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.VirtualMachinePreferences(ns).Create(ctx, &v1beta1.VirtualMachinePreference{ObjectMeta: metav1.ObjectMeta{Name: "machine"},
		Spec: v1beta1.VirtualMachinePreferenceSpec{
			Machine:      &v1beta1.MachinePreferences{PreferredMachineType: "pc-q35-rhel9.4.0"},
			Requirements: &v1beta1.PreferenceRequirements{CPU: &v1beta1.CPUPreferenceRequirement{Guest: 2}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Client.CdiV1beta1().DataVolumes(ns).Create(ctx, &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "golden", Labels: map[string]string{
			infer.DefaultInstancetypeLabel: "small", infer.DefaultInstancetypeKindLabel: "VirtualMachineInstancetype",
			infer.DefaultPreferenceLabel: "machine", infer.DefaultPreferenceKindLabel: "VirtualMachinePreference"}},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{"storage": mustQuantity("1Gi")}}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vm := func(name, volume string, mutate func(*v1.VirtualMachine)) (*v1.VirtualMachine, error) {
		o := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.VirtualMachineSpec{
			RunStrategy:  new(v1.RunStrategyHalted),
			Instancetype: &v1.InstancetypeMatcher{InferFromVolume: volume},
			Preference:   &v1.PreferenceMatcher{InferFromVolume: volume},
			Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{
				Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "golden"}}}},
			}},
		}}
		mutate(o)
		return server.Client.KubevirtV1().VirtualMachines(ns).Create(ctx, o, metav1.CreateOptions{})
	}
	got, err := vm("inferred", "root", func(*v1.VirtualMachine) {})
	if err != nil {
		t.Fatalf("a VM inferring from a labelled DataVolume: %v", err)
	}
	if *got.Spec.Instancetype != (v1.InstancetypeMatcher{Name: "small", Kind: "VirtualMachineInstancetype"}) ||
		*got.Spec.Preference != (v1.PreferenceMatcher{Name: "machine", Kind: "VirtualMachinePreference"}) ||
		got.Spec.Template.Spec.Domain.Machine == nil || got.Spec.Template.Spec.Domain.Machine.Type != "pc-q35-rhel9.4.0" {
		t.Errorf("inferred VM: instancetype %+v preference %+v machine %+v", got.Spec.Instancetype, got.Spec.Preference, got.Spec.Template.Spec.Domain.Machine)
	}
	_, err = vm("no-such-volume", "data", func(*v1.VirtualMachine) {})
	if !hasCause(err, "spec.instancetype.inferFromVolume") || !strings.Contains(err.Error(), "unable to find volume data to infer defaults") {
		t.Errorf("inferring from a volume the VM lacks: %v", err)
	}
	_, err = vm("one-core", "", func(o *v1.VirtualMachine) {
		o.Spec.Instancetype = nil
		o.Spec.Preference = &v1.PreferenceMatcher{Name: "machine", Kind: "VirtualMachinePreference"}
		o.Spec.Template.Spec.Domain.CPU = &v1.CPU{Sockets: 1, Cores: 4}
		o.Spec.Template.Spec.Domain.Memory = &v1.Memory{Guest: new(resource.MustParse("128Mi"))}
	})
	if !hasCause(err, "spec.template.spec.domain.cpu.sockets") || !strings.Contains(err.Error(),
		"insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets") {
		t.Errorf("a VM of 1 socket with a preference needing 2 vCPUs: %v", err)
	}
}
