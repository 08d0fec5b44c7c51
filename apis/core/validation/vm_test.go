package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/cdi"
	"github.com/vireo-dev/vireo/apis/core"
	"github.com/vireo-dev/vireo/apis/core/defaults"
)

// validVM returns a VM as a user writes it: an undefaulted template whose volumes have no disks and
// which has no networks, and a DataVolume template its rootdisk volume uses.
func validVM() *core.VirtualMachine {
	tmpl := core.VirtualMachineInstanceSpec{
		Domain: core.DomainSpec{Resources: core.ResourceRequirements{
			Requests: core.ResourceList{core.ResourceMemory: q("1Gi")}}},
		Volumes: []core.Volume{
			{Name: "rootdisk", VolumeSource: core.VolumeSource{DataVolume: &core.DataVolumeSource{Name: "fedora-root"}}},
			{Name: "cloudinit", VolumeSource: core.VolumeSource{CloudInitNoCloud: &core.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
		},
	}
	return &core.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "default"},
		Spec: core.VirtualMachineSpec{
			RunStrategy: ptr(core.RunStrategyAlways),
			Template: &core.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "fedora"}},
				Spec:       tmpl,
			},
			DataVolumeTemplates: []core.DataVolumeTemplateSpec{validDVTemplate("fedora-root")},
		},
	}
}

// validDVTemplate returns a DataVolume template named name importing over HTTP.
func validDVTemplate(name string) core.DataVolumeTemplateSpec {
	return core.DataVolumeTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cdi.DataVolumeSpec{
			Source: &cdi.DataVolumeSource{HTTP: &cdi.DataVolumeSourceHTTP{URL: "https://example.com/fedora.qcow2"}},
			Storage: &cdi.StorageSpec{Resources: cdi.VolumeResourceRequirements{
				Requests: cdi.ResourceList{cdi.ResourceStorage: q("10Gi")}}},
		},
	}
}

func TestValidateVirtualMachine(t *testing.T) {
	tspec := "spec.template.spec"
	dvt := "spec.dataVolumeTemplates"
	cases := []struct {
		name   string
		mutate func(vm *core.VirtualMachine)
		want   []fe
	}{
		{name: "valid"},
		{name: "running only", mutate: func(vm *core.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr(true) }},
		{name: "neither running nor runStrategy", mutate: func(vm *core.VirtualMachine) { vm.Spec.RunStrategy = nil }},
		{name: "running and runStrategy", mutate: func(vm *core.VirtualMachine) { vm.Spec.Running = ptr(false) },
			want: []fe{{invalid, "spec.running"}}},
		{name: "every run strategy", mutate: func(vm *core.VirtualMachine) { vm.Spec.RunStrategy = ptr(core.RunStrategyOnce) }},
		{name: "unknown run strategy", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.RunStrategy = ptr(core.VirtualMachineRunStrategy("WaitAsReceiver"))
		}, want: []fe{{notSupported, "spec.runStrategy"}}},
		{name: "no template", mutate: func(vm *core.VirtualMachine) { vm.Spec.Template, vm.Spec.DataVolumeTemplates = nil, nil },
			want: []fe{{required, "spec.template"}}},
		{name: "template errors have template paths", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Resources.Requests = nil
			vm.Spec.Template.Spec.Domain.Devices.Disks = []core.Disk{{Name: "nosuchvolume"}}
		}, want: []fe{{required, tspec + ".domain.resources.requests.memory"}, {invalid, tspec + ".domain.devices.disks[0].name"}}},
		{name: "template interface without network", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Devices.Interfaces = []core.Interface{masq("default")}
		}, want: []fe{{invalid, tspec + ".domain.devices.interfaces[0].name"}}},
		{name: "template bridge refused", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.Template.Spec.Networks = []core.Network{podNet("default")}
			vm.Spec.Template.Spec.Domain.Devices.Interfaces = []core.Interface{{Name: "default",
				InterfaceBindingMethod: core.InterfaceBindingMethod{Bridge: &core.InterfaceBridge{}}}}
		}, want: []fe{{forbidden, tspec + ".domain.devices.interfaces[0].bridge"}}},
		{name: "template labels", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.Template.ObjectMeta.Labels = map[string]string{"kubevirt.io/nodeName": "n1", "bad key": "v"}
		}, want: []fe{{invalid, "spec.template.metadata.labels"}}},
		{name: "DV template without name", mutate: func(vm *core.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Name = "" },
			want: []fe{{required, dvt + "[0].metadata.name"}}},
		{name: "DV template bad name", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.DataVolumeTemplates[0].ObjectMeta.Name = "Fedora_Root"
			vm.Spec.Template.Spec.Volumes[0].DataVolume.Name = "Fedora_Root"
		}, want: []fe{{invalid, tspec + ".volumes[0].dataVolume.name"}, {invalid, dvt + "[0].metadata.name"}}},
		{name: "duplicate DV template", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, validDVTemplate("fedora-root"))
		}, want: []fe{{duplicate, dvt + "[1].metadata.name"}}},
		{name: "unused DV template", mutate: func(vm *core.VirtualMachine) {
			vm.Spec.DataVolumeTemplates = append(vm.Spec.DataVolumeTemplates, validDVTemplate("unused"))
		}, want: []fe{{invalid, dvt + "[1].metadata.name"}}},
		{name: "DV template in another namespace", mutate: func(vm *core.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Namespace = "other" },
			want: []fe{{invalid, dvt + "[0].metadata.namespace"}}},
		{name: "DV template in the VM's namespace", mutate: func(vm *core.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].ObjectMeta.Namespace = "default" }},
		{name: "DV template spec", mutate: func(vm *core.VirtualMachine) { vm.Spec.DataVolumeTemplates[0].Spec.Source = nil },
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
	vm.Spec.Running = ptr(true)
	errs := ValidateVirtualMachine(vm)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "spec.running") || !strings.Contains(errs[0].Detail, "spec.runStrategy") {
		t.Errorf("errors = %v, want one naming spec.running and spec.runStrategy", errs)
	}
}

func TestDefaultedVMIsValid(t *testing.T) {
	vm := validVM()
	vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr(true)
	defaults.SetVirtualMachineDefaults(vm)
	expectErrors(t, ValidateVirtualMachine(vm))
	// The VMI made from the template, once defaulted, is valid too.
	vmi := &core.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace},
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
			m := &core.VirtualMachineInstanceMigration{
				ObjectMeta: metav1.ObjectMeta{Name: "mig1", Namespace: "default"},
				Spec:       core.VirtualMachineInstanceMigrationSpec{VMIName: tc.vmiName},
			}
			expectErrors(t, ValidateVirtualMachineInstanceMigration(m), tc.want...)
		})
	}
}

func TestValidateMigrationUpdate(t *testing.T) {
	old := &core.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "mig1", Namespace: "default", ResourceVersion: "1"},
		Spec:       core.VirtualMachineInstanceMigrationSpec{VMIName: "fedora"},
	}
	same := old.DeepCopy()
	same.Labels = map[string]string{"a": "b"}
	same.Status.Phase = core.MigrationRunning
	expectErrors(t, ValidateVirtualMachineInstanceMigrationUpdate(same, old))

	changed := old.DeepCopy()
	changed.Spec.VMIName = "other"
	errs := ValidateVirtualMachineInstanceMigrationUpdate(changed, old)
	expectErrors(t, errs, fe{forbidden, "spec"})
	if len(errs) == 1 && !strings.Contains(errs[0].Detail, "spec.vmiName") {
		t.Errorf("message %q does not name spec.vmiName", errs[0].Detail)
	}
}
