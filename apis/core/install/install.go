// Package install registers the kubevirt.io group with a scheme, the way vireo-apiserver serves it.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// InternalGroupVersion is the group's in-memory (hub) version inside vireo-apiserver. The group has
// one version on the wire, so its hub types are the v1 types themselves: with one Go type
// registered under both versions, converting between them only resets the kind (no conversion
// functions, one deepcopy).
var InternalGroupVersion = schema.GroupVersion{Group: v1.GroupName, Version: runtime.APIVersionInternal}

// Install adds the kubevirt.io/v1 types, field selectors and defaulters to scheme, registers the same
// types as the internal version, and makes v1 the preferred version. It panics only on a
// programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(v1.AddToScheme(scheme))
	scheme.AddKnownTypes(InternalGroupVersion, v1.KnownTypes()...)
	utilruntime.Must(scheme.SetVersionPriority(v1.SchemeGroupVersion))
}
