package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/warning"

	coreinstall "github.com/vireo-dev/vireo/apis/core/install"
)

// deprecatedVersions are the group versions Vireo serves only because KubeVirt still does, and
// the warning KubeVirt gives with every request to them.
var deprecatedVersions = map[string]string{
	"/apis/" + coreinstall.V1alpha3.String() + "/": "kubevirt.io/v1alpha3 is now deprecated and will be removed in a future release.",
	"/apis/" + SubresourcesV1alpha3.String() + "/": "subresources.kubevirt.io/v1alpha3 is now deprecated and will be removed in a future release.",
}

// withDeprecationWarnings adds the deprecation warning to every request to a deprecated version
// (clients print it, as kubectl does: "Warning: kubevirt.io/v1alpha3 is now deprecated ...").
// It must run inside the chain's warning recorder.
func withDeprecationWarnings(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for prefix, message := range deprecatedVersions {
			if strings.HasPrefix(req.URL.Path, prefix) {
				warning.AddWarning(req.Context(), "", message)
			}
		}
		h.ServeHTTP(w, req)
	})
}
