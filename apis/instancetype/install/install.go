// Package install registers the instancetype.kubevirt.io group with a scheme, the way
// vireo-apiserver serves it.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// InternalGroupVersion is the group's in-memory (hub) version inside vireo-apiserver: the
// v1beta1 types themselves, as for the other groups (one version on the wire, no conversion
// functions).
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// Install adds the instancetype.kubevirt.io/v1beta1 types and defaulters to scheme, registers the
// same types as the internal version, and makes v1beta1 the preferred version. It panics only on
// a programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	scheme.AddKnownTypes(InternalGroupVersion, v1beta1.KnownTypes()...)
	utilruntime.Must(scheme.SetVersionPriority(v1beta1.SchemeGroupVersion))
}
