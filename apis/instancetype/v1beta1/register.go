package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of KubeVirt's instancetypes and preferences.
const GroupName = "instancetype.kubevirt.io"

// SchemeGroupVersion is the group and version of every kind in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

var (
	// SchemeBuilder collects the functions that register this version's kinds and defaulters
	// with a scheme.
	SchemeBuilder runtime.SchemeBuilder
	// localSchemeBuilder lets generated code (defaulters) register into SchemeBuilder.
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme registers this version's kinds and defaulters with a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	localSchemeBuilder.Register(addKnownTypes, RegisterDefaults)
}

// Resource qualifies an unqualified resource name with this package's group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// KnownTypes returns a new empty object of every kind of this version. vireo-apiserver also
// registers them as the group's internal (hub) version; clients register them only as this one.
func KnownTypes() []runtime.Object {
	return []runtime.Object{
		&VirtualMachineInstancetype{},
		&VirtualMachineInstancetypeList{},
		&VirtualMachineClusterInstancetype{},
		&VirtualMachineClusterInstancetypeList{},
		&VirtualMachinePreference{},
		&VirtualMachinePreferenceList{},
		&VirtualMachineClusterPreference{},
		&VirtualMachineClusterPreferenceList{},
	}
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, KnownTypes()...)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
