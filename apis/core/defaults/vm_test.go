package defaults

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestVMRunStrategyDefaults(t *testing.T) {
	always, halted, manual := v1.RunStrategyAlways, v1.RunStrategyHalted, v1.RunStrategyManual
	cases := []struct {
		name        string
		running     *bool
		strategy    *v1.VirtualMachineRunStrategy
		wantRunning *bool
		want        *v1.VirtualMachineRunStrategy
	}{
		{name: "running true", running: ptr(true), want: &always},
		{name: "running false", running: ptr(false), want: &halted},
		{name: "neither", want: nil},
		{name: "runStrategy kept", strategy: &manual, want: &manual},
		// Both set is left for validation to refuse.
		{name: "both kept", running: ptr(true), strategy: &manual, wantRunning: ptr(true), want: &manual},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{Running: tc.running, RunStrategy: tc.strategy}}
			SetVirtualMachineDefaults(vm)
			if !apiequality.Semantic.DeepEqual(vm.Spec.RunStrategy, tc.want) {
				t.Errorf("runStrategy = %v, want %v", vm.Spec.RunStrategy, tc.want)
			}
			if !apiequality.Semantic.DeepEqual(vm.Spec.Running, tc.wantRunning) {
				t.Errorf("running = %v, want %v", vm.Spec.Running, tc.wantRunning)
			}
		})
	}
}

func TestVMTemplateDefaults(t *testing.T) {
	vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{Template: &v1.VirtualMachineInstanceTemplateSpec{
		Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{volume("a")}},
	}}}
	SetVirtualMachineDefaults(vm)
	tmpl := vm.Spec.Template.Spec
	if tmpl.Domain.Machine == nil || tmpl.Domain.Machine.Type != "q35" {
		t.Errorf("template machine = %+v, want type q35", tmpl.Domain.Machine)
	}
	// Nothing else of the template is defaulted.
	want := v1.VirtualMachineInstanceSpec{
		Domain:  v1.DomainSpec{Machine: &v1.Machine{Type: "q35"}},
		Volumes: []v1.Volume{volume("a")},
	}
	if !apiequality.Semantic.DeepEqual(tmpl, want) {
		t.Errorf("template spec = %+v, want only the machine type added: %+v", tmpl, want)
	}

	vm.Spec.Template.Spec.Domain.Machine.Type = "pc-q35-9.0"
	SetVirtualMachineDefaults(vm)
	if got := vm.Spec.Template.Spec.Domain.Machine.Type; got != "pc-q35-9.0" {
		t.Errorf("template machine type = %q, want the user's pc-q35-9.0", got)
	}

	noTemplate := &v1.VirtualMachine{}
	SetVirtualMachineDefaults(noTemplate) // must not panic
	if noTemplate.Spec.Template != nil {
		t.Errorf("a template was invented: %+v", noTemplate.Spec.Template)
	}
}
