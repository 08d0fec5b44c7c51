// Package install registers the cdi.kubevirt.io group with a scheme, the way vireo-apiserver serves it.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	v1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
)

// InternalGroupVersion is the group's in-memory (hub) version inside vireo-apiserver. The group has
// one version on the wire, so its hub types are the v1beta1 types themselves: with one Go type
// registered under both versions, converting between them only resets the kind (no conversion
// functions, one deepcopy).
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// Install adds the cdi.kubevirt.io/v1beta1 types, field selectors and defaulters to scheme, registers the same
// types as the internal version, and makes v1beta1 the preferred version. It panics only on a
// programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	scheme.AddKnownTypes(InternalGroupVersion, v1beta1.KnownTypes()...)
	utilruntime.Must(scheme.SetVersionPriority(v1beta1.SchemeGroupVersion))
}
