package defaults

import "github.com/vireo-dev/vireo/apis/core"

// SetVirtualMachineDefaults fills in the defaults of a VirtualMachine on create and on every
// update: the deprecated running flag becomes the equivalent runStrategy (Always or Halted), and
// the template gets the default machine type. The rest of the template is defaulted only when a
// VMI is created from it, so that later changes of the defaults reach existing VMs.
func SetVirtualMachineDefaults(vm *core.VirtualMachine) {
	spec := &vm.Spec
	if spec.RunStrategy == nil && spec.Running != nil {
		strategy := core.RunStrategyHalted
		if *spec.Running {
			strategy = core.RunStrategyAlways
		}
		spec.RunStrategy = &strategy
		spec.Running = nil
	}
	if spec.Template != nil {
		setMachineDefaults(&spec.Template.Spec.Domain)
	}
}
