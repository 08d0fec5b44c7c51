// Package install registers the kubevirt.io group with a scheme, the way vireo-apiserver serves it.
package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// InternalGroupVersion is the group's in-memory (hub) version inside vireo-apiserver. The group has
// one schema on the wire, so its hub types are the v1 types themselves: with one Go type
// registered under several versions, converting between them only resets the kind (no conversion
// functions, one deepcopy).
var InternalGroupVersion = schema.GroupVersion{Group: v1.GroupName, Version: runtime.APIVersionInternal}

// V1alpha3 is KubeVirt's deprecated version of the group. KubeVirt serves it with v1's schema
// (its CRDs list both versions with one schema and no conversion), so the same types serve it.
var V1alpha3 = schema.GroupVersion{Group: v1.GroupName, Version: "v1alpha3"}

// Install adds the kubevirt.io/v1 types, field selectors and defaulters to scheme, registers the same
// types as the internal version and as v1alpha3, and makes v1 the preferred version. It panics
// only on a programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(v1.AddToScheme(scheme))
	scheme.AddKnownTypes(InternalGroupVersion, v1.KnownTypes()...)
	scheme.AddKnownTypes(V1alpha3, v1.KnownTypes()...)
	metav1.AddToGroupVersion(scheme, V1alpha3)
	utilruntime.Must(v1.AddFieldLabelConversions(scheme, V1alpha3))
	utilruntime.Must(scheme.SetVersionPriority(v1.SchemeGroupVersion, V1alpha3))
}
