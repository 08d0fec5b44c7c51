package core

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of KubeVirt's core kinds.
const GroupName = "kubevirt.io"

// SchemeGroupVersion is the internal version of the group, used by the server's storage and strategies.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: runtime.APIVersionInternal}

var (
	// SchemeBuilder collects the functions that register the internal kinds with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers the internal kinds with a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind qualifies an unqualified kind name with this package's group.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource qualifies an unqualified resource name with this package's group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&VirtualMachineInstance{},
		&VirtualMachineInstanceList{},
		&VirtualMachine{},
		&VirtualMachineList{},
		&VirtualMachineInstanceMigration{},
		&VirtualMachineInstanceMigrationList{},
	)
	return nil
}
