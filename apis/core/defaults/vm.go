package defaults

import v1 "github.com/vireo-dev/vireo/apis/core/v1"

// SetVirtualMachineDefaults fills in the defaults of a VirtualMachine on create and on every
// update: the deprecated running flag becomes the equivalent runStrategy (Always or Halted), and
// the template gets the default machine type. The rest of the template is defaulted only when a
// VMI is created from it, so that later changes of the defaults reach existing VMs.
func SetVirtualMachineDefaults(vm *v1.VirtualMachine) {
	spec := &vm.Spec
	if spec.RunStrategy == nil && spec.Running != nil {
		strategy := v1.RunStrategyHalted
		if *spec.Running {
			strategy = v1.RunStrategyAlways
		}
		spec.RunStrategy = &strategy
		spec.Running = nil
	}
	if spec.Template != nil {
		setMachineDefaults(&spec.Template.Spec.Domain)
	}
}
