// Package install registers the kubevirt.io group (internal and v1) with a scheme in one call.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/vireo-dev/vireo/apis/core"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Install adds the internal and v1 kubevirt.io types, conversions and defaulters to scheme and
// makes v1 the preferred version. It panics only on a programming error (a conflicting registration).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(core.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(v1.SchemeGroupVersion))
}
