package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// validVM returns a VM as a user writes it: an undefaulted template whose volumes have no disks and
// which has no networks, and a DataVolume template its rootdisk volume uses.
func validVM() *v1.VirtualMachine {
	tmpl := v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: q("1Gi")}}},
		Volumes: []v1.Volume{
			{Name: "rootdisk", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "fedora-root"}}},
			{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
		},
	}
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "default"},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(v1.RunStrategyAlways),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "fedora"}},
				Spec:       tmpl,
			},
			DataVolumeTemplates: []v1.DataVolumeTemplateSpec{validDVTemplate("fedora-root")},
		},
	}
}

// validDVTemplate returns a DataVolume template named name importing over HTTP.
func validDVTemplate(name string) v1.DataVolumeTemplateSpec {
	return v1.DataVolumeTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source: &cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "https://example.com/fedora.qcow2"}},
			Storage: &cdiv1beta1.StorageSpec{Resources: cdiv1beta1.VolumeResourceRequirements{
				Requests: cdiv1beta1.ResourceList{cdiv1beta1.ResourceStorage: q("10Gi")}}},
		},
	}
}

func TestValidateVirtualMachine(t *testing.T) {
	tspec := "spec.template.spec"
	dvt := "spec.dataVolumeTemplates"
	cases := []struct {
		name   string
		mutate func(vm *v1.VirtualMachine)
		want   []fe
	}{
		{name: "valid"},
		{name: "running only", mutate: func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(true) }},
		{name: "neither running nor runStrategy", mutate: func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy = nil },
			want: []fe{{required, "spec.runStrategy"}}},
		{name: "running and runStrategy", mutate: func(vm *v1.VirtualMachine) { vm.Spec.Running = ptr.To(false) },
			want: []fe{{invalid, "spec.running"}}},
		{name: "every run strategy", mutate: func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy = ptr.To(v1.RunStrategyOnce) }},
		{name: "unknown run strategy", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.RunStrategy = ptr.To(v1.VirtualMachineRunStrategy("WaitAsReceiver"))
		}, want: []fe{{notSupported, "spec.runStrategy"}}},
		{name: "no template", mutate: func(vm *v1.VirtualMachine) { vm.Spec.Template, vm.Spec.DataVolumeTemplates = nil, nil },
			want: []fe{{required, "spec.template"}}},
		{name: "template errors have template paths", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Resources.Requests = nil
			vm.Spec.Template.Spec.Domain.Devices.Disks = []v1.Disk{{Name: "nosuchvolume"}}
		}, want: []fe{{required, tspec + ".domain.resources.requests.memory"}, {invalid, tspec + ".domain.devices.disks[0].name"}}},
		{name: "template interface without network", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Devices.Interfaces = []v1.Interface{masq("default")}
		}, want: []fe{{invalid, tspec + ".domain.devices.interfaces[0].name"}}},
		{name: "template labels", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Labels = map[string]string{"kubevirt.io/nodeName": "n1", "bad key": "v"}
		}, want: []fe{{invalid, "spec.template.metadata.labels"}}},
		{name: "DV template without name", mutate: func(vm *v1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Name = "" },
			want: []fe{{required, dvt + "[0].metadata.name"}}},
		{name: "DV template bad name", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates[0].ObjectMeta.Name = "Fedora_Root"
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Name = "Fedora_Root"
		}, want: []fe{{invalid, tspec + ".volumes[0].dataVolume.name"}, {invalid, dvt + "[0].metadata.name"}}},
		{name: "duplicate DV template", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, validDVTemplate("fedora-root"))
		}, want: []fe{{duplicate, dvt + "[1].metadata.name"}}},
		{name: "unused DV template", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, validDVTemplate("unused"))
		}, want: []fe{{invalid, dvt + "[1].metadata.name"}}},
		{name: "DV template used as a PVC", mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.Spec.Volumes[0].VolumeSource = v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "fedora-root"}}
		}},
		{name: "DV template in another namespace", mutate: func(vm *v1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Namespace = "other" },
			want: []fe{{invalid, dvt + "[0].metadata.namespace"}}},
		{name: "DV template in the VM's namespace", mutate: func(vm *v1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Namespace = "default" }},
		{name: "DV template spec", mutate: func(vm *v1.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Spec.Source = nil },
			want: []fe{{required, dvt + "[0].spec.source"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := validVM()
			if tc.mutate != nil {
				tc.mutate(vm)
			}
			expectErrors(t, ValidateVirtualMachine(vm), tc.want...)
			old := validVM()
			old.ResourceVersion = "1"
			vm.ResourceVersion = "1"
			expectErrors(t, ValidateVirtualMachineUpdate(vm, old), tc.want...)
		})
	}
}

func TestRunningAndRunStrategyMessage(t *testing.T) {
	vm := validVM()
	vm.Spec.Running = ptr.To(true)
	errs := ValidateVirtualMachine(vm)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "spec.running") || !strings.Contains(errs[0].Detail, "spec.runStrategy") {
		t.Errorf("errors = %v, want one naming spec.running and spec.runStrategy", errs)
	}
}

func TestDefaultedVMIsValid(t *testing.T) {
	vm := validVM()
	vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(true)
	defaults.SetVirtualMachineDefaults(vm)
	expectErrors(t, ValidateVirtualMachine(vm))
	// The VMI made from the template, once defaulted, is valid too.
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace},
		Spec: *vm.Spec.Template.Spec.DeepCopy()}
	defaults.SetVirtualMachineInstanceDefaults(vmi)
	expectErrors(t, ValidateVirtualMachineInstance(vmi))
}

func TestVMUpdateMetadata(t *testing.T) {
	old := validVM()
	old.ResourceVersion = "1"
	vm := old.DeepCopy()
	vm.Namespace = "elsewhere"
	expectErrors(t, ValidateVirtualMachineUpdate(vm, old), fe{invalid, "metadata.namespace"})
}

func TestValidateMigration(t *testing.T) {
	cases := []struct {
		name, vmiName string
		want          []fe
	}{
		{name: "valid", vmiName: "fedora"},
		{name: "dotted", vmiName: "fedora.prod"},
		{name: "missing", want: []fe{{required, "spec.vmiName"}}},
		{name: "invalid", vmiName: "Fedora_VM", want: []fe{{invalid, "spec.vmiName"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &v1.VirtualMachineInstanceMigration{
				ObjectMeta: metav1.ObjectMeta{Name: "mig1", Namespace: "default"},
				Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: tc.vmiName},
			}
			expectErrors(t, ValidateVirtualMachineInstanceMigration(m), tc.want...)
		})
	}
}

func TestValidateMigrationUpdate(t *testing.T) {
	old := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "mig1", Namespace: "default", ResourceVersion: "1"},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: "fedora"},
	}
	same := old.DeepCopy()
	same.Labels = map[string]string{"a": "b"}
	same.Status.Phase = v1.MigrationRunning
	expectErrors(t, ValidateVirtualMachineInstanceMigrationUpdate(same, old))

	changed := old.DeepCopy()
	changed.Spec.VMIName = "other"
	errs := ValidateVirtualMachineInstanceMigrationUpdate(changed, old)
	expectErrors(t, errs, fe{forbidden, "spec"})
	if len(errs) == 1 && !strings.Contains(errs[0].Detail, "spec.vmiName") {
		t.Errorf("message %q does not name spec.vmiName", errs[0].Detail)
	}
}

// TestVMSizesAndVolumeUpdates: instancetypes and preferences need a name and a known kind (inferring
// them from a volume is not done yet); live storage migration is refused with a reason rather
// than stored and ignored.
func TestVMSizesAndVolumeUpdates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*v1.VirtualMachine)
		want   string
	}{
		{"instancetype", func(vm *v1.VirtualMachine) { vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "u1.nano"} }, ""},
		{"instancetype kind", func(vm *v1.VirtualMachine) {
			vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "u1.nano", Kind: "virtualmachineclusterinstancetype"}
		}, ""},
		{"instancetype without a name", func(vm *v1.VirtualMachine) { vm.Spec.Instancetype = &v1.InstancetypeMatcher{} },
			"spec.instancetype: Required value: Either Name or InferFromVolume"},
		{"preference of another kind", func(vm *v1.VirtualMachine) {
			vm.Spec.Preference = &v1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachineInstancetype"}
		}, "spec.preference.kind: Unsupported value"},
		{"inferred preference", func(vm *v1.VirtualMachine) { vm.Spec.Preference = &v1.PreferenceMatcher{InferFromVolume: "root"} }, ""},
		{"inferred preference with a name", func(vm *v1.VirtualMachine) {
			vm.Spec.Preference = &v1.PreferenceMatcher{InferFromVolume: "root", Name: "fedora"}
		}, "spec.preference.name: Forbidden: Name already set"},
		{"inferred instancetype with a kind", func(vm *v1.VirtualMachine) {
			vm.Spec.Instancetype = &v1.InstancetypeMatcher{InferFromVolume: "root", Kind: "VirtualMachineInstancetype"}
		}, "spec.instancetype.kind: Forbidden: Kind already set"},
		{"unknown failure policy", func(vm *v1.VirtualMachine) {
			vm.Spec.Instancetype = &v1.InstancetypeMatcher{InferFromVolume: "root", InferFromVolumeFailurePolicy: ptr.To[v1.InferFromVolumeFailurePolicy]("Skip")}
		}, "spec.instancetype.inferFromVolumeFailurePolicy: Unsupported value: \"Skip\""},
		{"storage migration", func(vm *v1.VirtualMachine) {
			vm.Spec.UpdateVolumesStrategy = ptr.To[v1.UpdateVolumesStrategy]("Migration")
		},
			"spec.updateVolumesStrategy: Unsupported value: \"Migration\""},
		{"replacement", func(vm *v1.VirtualMachine) {
			vm.Spec.UpdateVolumesStrategy = ptr.To[v1.UpdateVolumesStrategy]("Replacement")
		}, ""},
	} {
		vm := validVM()
		tc.mutate(vm)
		errs := ValidateVirtualMachine(vm)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v, want no error", tc.name, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, errs, tc.want)
		}
	}
}

// TestPinnedMatcherRename: a VM whose instancetype is renamed while still pinning the old one's
// revision is refused, as KubeVirt refuses it; clearing or changing the revision passes.
func TestPinnedMatcherRename(t *testing.T) {
	old := validVM()
	old.ResourceVersion = "1"
	old.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "u1.nano", RevisionName: "demo-u1.nano-abc"}
	renamed := old.DeepCopy()
	renamed.Spec.Instancetype.Name = "u1.small"
	errs := ValidateVirtualMachineUpdate(renamed, old)
	if len(errs) != 1 || errs[0].Field != "spec.instancetype.revisionName" {
		t.Errorf("rename keeping the revision: %v", errs)
	}
	renamed.Spec.Instancetype.RevisionName = ""
	if errs := ValidateVirtualMachineUpdate(renamed, old); len(errs) != 0 {
		t.Errorf("rename clearing the revision: %v", errs)
	}
}
