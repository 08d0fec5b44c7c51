// Package install registers the pool.kubevirt.io group with a scheme, the way vireo-apiserver
// serves it.
package install

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

// InternalGroupVersion is the group's in-memory (hub) version inside vireo-apiserver: the
// v1beta1 types themselves, as for the other groups (one schema on the wire, no conversion
// functions).
var InternalGroupVersion = schema.GroupVersion{Group: v1beta1.GroupName, Version: runtime.APIVersionInternal}

// V1alpha1 is the group's older version, which KubeVirt still serves; the same types serve it.
var V1alpha1 = schema.GroupVersion{Group: v1beta1.GroupName, Version: "v1alpha1"}

// Install adds the pool.kubevirt.io/v1beta1 types and defaulters to scheme, registers the same
// types as the internal version and as v1alpha1, and makes v1beta1 the preferred version. It
// panics only on a programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	scheme.AddKnownTypes(InternalGroupVersion, v1beta1.KnownTypes()...)
	scheme.AddKnownTypes(V1alpha1, v1beta1.KnownTypes()...)
	metav1.AddToGroupVersion(scheme, V1alpha1)
	utilruntime.Must(scheme.SetVersionPriority(v1beta1.SchemeGroupVersion, V1alpha1))
}
