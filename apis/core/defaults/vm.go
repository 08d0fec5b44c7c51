package defaults

import v1 "github.com/vireo-dev/vireo/apis/core/v1"

// SetVirtualMachineDefaults fills in what KubeVirt's VM mutator fills in, on create and on every
// update: the template's architecture and machine type. spec.running and spec.runStrategy are
// stored exactly as written. The rest of the template is defaulted only when a VMI is created from
// it, so that later changes of the defaults reach existing VMs.
func SetVirtualMachineDefaults(vm *v1.VirtualMachine) {
	if vm.Spec.Template == nil {
		return
	}
	spec := &vm.Spec.Template.Spec
	if spec.Architecture == "" {
		spec.Architecture = DefaultArchitecture
	}
	setMachineDefaults(&spec.Domain)
}

// SetMigrationDefaults adds what KubeVirt's migration mutator adds to a new migration: the
// kubevirt.io/vmi-name label (so migrations of a VMI can be listed by label) and the finalizer that
// lets the controller clean up after it.
func SetMigrationDefaults(m *v1.VirtualMachineInstanceMigration) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[v1.MigrationSelectorLabel] = m.Spec.VMIName
	for _, f := range m.Finalizers {
		if f == v1.VirtualMachineInstanceMigrationFinalizer {
			return
		}
	}
	m.Finalizers = append(m.Finalizers, v1.VirtualMachineInstanceMigrationFinalizer)
}

// SetReplicaSetDefaults fills in a replica set's replica count (1, as the controller of KubeVirt
// assumes when it is unset) and, as for a VM, its template's architecture and machine type.
func SetReplicaSetDefaults(rs *v1.VirtualMachineInstanceReplicaSet) {
	if rs.Spec.Replicas == nil {
		one := int32(1)
		rs.Spec.Replicas = &one
	}
	if rs.Spec.Template == nil {
		return
	}
	spec := &rs.Spec.Template.Spec
	if spec.Architecture == "" {
		spec.Architecture = DefaultArchitecture
	}
	setMachineDefaults(&spec.Domain)
}
