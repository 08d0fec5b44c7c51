// Package instancetype is the registry of instancetype.kubevirt.io/v1beta1: instancetypes and
// preferences, namespaced and cluster-wide (no status, as KubeVirt's), with validation, short
// names and categories as KubeVirt's CRDs declare them.
package instancetype

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	"github.com/vireo-dev/vireo/apis/instancetype/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// kind is what the four kinds' resources differ in.
type kind[T storeutil.Object] struct {
	plural, singular string
	shortNames       []string
	cluster          bool
	newObj, newList  func() runtime.Object
	// validate checks o and, on an update, its metadata against old's (nil on create).
	validate func(o T, old *metav1.ObjectMeta) field.ErrorList
	spec     func(o T) any
	copySpec func(dst, src T)
}

func (k kind[T]) resource() storeutil.Resource[T] {
	return storeutil.Resource[T]{
		Plural:     v1beta1.Resource(k.plural),
		Singular:   v1beta1.Resource(k.singular),
		ShortNames: k.shortNames,
		New:        k.newObj,
		NewList:    k.newList,
		Hooks: storeutil.Hooks[T]{
			APIVersion:    v1beta1.SchemeGroupVersion.String(),
			ClusterScoped: k.cluster,
			Validate:      func(_ context.Context, o T) field.ErrorList { return k.validate(o, nil) },
			ValidateUpdate: func(_ context.Context, o, old T) field.ErrorList {
				meta, _ := any(old).(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
				return k.validate(o, meta)
			},
			CopySpec: k.copySpec,
			Spec:     k.spec,
		},
		Table: storeutil.Table[T]{Columns: []metav1.TableColumnDefinition{storeutil.AgeColumn}, Cells: func(_ T, age string) []any { return []any{age} }},
	}
}

// Instancetypes describes VirtualMachineInstancetypes.
func Instancetypes() storeutil.Resource[*v1beta1.VirtualMachineInstancetype] {
	return kind[*v1beta1.VirtualMachineInstancetype]{
		plural: "virtualmachineinstancetypes", singular: "virtualmachineinstancetype",
		shortNames: []string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"},
		newObj:     func() runtime.Object { return &v1beta1.VirtualMachineInstancetype{} },
		newList:    func() runtime.Object { return &v1beta1.VirtualMachineInstancetypeList{} },
		validate: func(o *v1beta1.VirtualMachineInstancetype, old *metav1.ObjectMeta) field.ErrorList {
			return validation.ValidateInstancetype(&o.ObjectMeta, old, true, &o.Spec)
		},
		spec:     func(o *v1beta1.VirtualMachineInstancetype) any { return o.Spec },
		copySpec: func(dst, src *v1beta1.VirtualMachineInstancetype) { dst.Spec = src.Spec },
	}.resource()
}

// ClusterInstancetypes describes VirtualMachineClusterInstancetypes.
func ClusterInstancetypes() storeutil.Resource[*v1beta1.VirtualMachineClusterInstancetype] {
	return kind[*v1beta1.VirtualMachineClusterInstancetype]{
		plural: "virtualmachineclusterinstancetypes", singular: "virtualmachineclusterinstancetype",
		shortNames: []string{"vmclusterinstancetype", "vmclusterinstancetypes", "vmcf", "vmcfs"}, cluster: true,
		newObj:  func() runtime.Object { return &v1beta1.VirtualMachineClusterInstancetype{} },
		newList: func() runtime.Object { return &v1beta1.VirtualMachineClusterInstancetypeList{} },
		validate: func(o *v1beta1.VirtualMachineClusterInstancetype, old *metav1.ObjectMeta) field.ErrorList {
			return validation.ValidateInstancetype(&o.ObjectMeta, old, false, &o.Spec)
		},
		spec:     func(o *v1beta1.VirtualMachineClusterInstancetype) any { return o.Spec },
		copySpec: func(dst, src *v1beta1.VirtualMachineClusterInstancetype) { dst.Spec = src.Spec },
	}.resource()
}

// Preferences describes VirtualMachinePreferences.
func Preferences() storeutil.Resource[*v1beta1.VirtualMachinePreference] {
	return kind[*v1beta1.VirtualMachinePreference]{
		plural: "virtualmachinepreferences", singular: "virtualmachinepreference",
		shortNames: []string{"vmpref", "vmprefs", "vmp", "vmps"},
		newObj:     func() runtime.Object { return &v1beta1.VirtualMachinePreference{} },
		newList:    func() runtime.Object { return &v1beta1.VirtualMachinePreferenceList{} },
		validate: func(o *v1beta1.VirtualMachinePreference, old *metav1.ObjectMeta) field.ErrorList {
			return validation.ValidatePreference(&o.ObjectMeta, old, true, &o.Spec)
		},
		spec:     func(o *v1beta1.VirtualMachinePreference) any { return o.Spec },
		copySpec: func(dst, src *v1beta1.VirtualMachinePreference) { dst.Spec = src.Spec },
	}.resource()
}

// ClusterPreferences describes VirtualMachineClusterPreferences.
func ClusterPreferences() storeutil.Resource[*v1beta1.VirtualMachineClusterPreference] {
	return kind[*v1beta1.VirtualMachineClusterPreference]{
		plural: "virtualmachineclusterpreferences", singular: "virtualmachineclusterpreference",
		shortNames: []string{"vmcp", "vmcps"}, cluster: true,
		newObj:  func() runtime.Object { return &v1beta1.VirtualMachineClusterPreference{} },
		newList: func() runtime.Object { return &v1beta1.VirtualMachineClusterPreferenceList{} },
		validate: func(o *v1beta1.VirtualMachineClusterPreference, old *metav1.ObjectMeta) field.ErrorList {
			return validation.ValidatePreference(&o.ObjectMeta, old, false, &o.Spec)
		},
		spec:     func(o *v1beta1.VirtualMachineClusterPreference) any { return o.Spec },
		copySpec: func(dst, src *v1beta1.VirtualMachineClusterPreference) { dst.Spec = src.Spec },
	}.resource()
}
