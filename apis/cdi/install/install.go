// Package install registers the cdi.kubevirt.io group (internal and v1beta1) with a scheme in one call.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/vireo-dev/vireo/apis/cdi"
	"github.com/vireo-dev/vireo/apis/cdi/v1beta1"
)

// Install adds the internal and v1beta1 cdi.kubevirt.io types, conversions and defaulters to scheme
// and makes v1beta1 the preferred version. It panics only on a programming error (a conflicting
// registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(cdi.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(v1beta1.SchemeGroupVersion))
}
