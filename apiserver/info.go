package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/version"
)

// healthTimeout bounds the health check's question to kube-apiserver.
const healthTimeout = 5 * time.Second

// installInfoEndpoints serves KubeVirt's GET /apis/subresources.kubevirt.io/v1/version (this
// build's version) and /healthz: {"apiserver": {"connectivity": "ok", "version": ...}} with
// kube-apiserver's version when vireo-apiserver reaches it, else 500 with "failed" and the
// error. A standalone server (no core API) answers "standalone". Through kube-apiserver they
// need get on subresources.kubevirt.io version and healthz, which the ClusterRole
// kubevirt.io:default grants every authenticated user.
func installInfoEndpoints(gs *genericapiserver.GenericAPIServer, kube *rest.Config) error {
	prefix := "/apis/" + SubresourcesGroupVersion.String()
	gs.Handler.NonGoRestfulMux.Handle(prefix+"/version", onlyGet(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, version.Get())
	}))
	var kubeVersion func(context.Context) (any, error)
	if kube != nil {
		cfg := rest.CopyConfig(kube)
		cfg.Timeout = healthTimeout
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		kubeVersion = func(ctx context.Context) (any, error) {
			raw, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
			if err != nil {
				return nil, err
			}
			var v any
			return v, json.Unmarshal(raw, &v)
		}
	}
	gs.Handler.NonGoRestfulMux.Handle(prefix+"/healthz", onlyGet(func(w http.ResponseWriter, r *http.Request) {
		if kubeVersion == nil {
			writeJSON(w, http.StatusOK, map[string]any{"apiserver": map[string]any{"connectivity": "standalone"}})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		v, err := kubeVersion(ctx)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"apiserver": map[string]any{"connectivity": "failed", "error": err.Error()}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"apiserver": map[string]any{"connectivity": "ok", "version": v}})
	}))
	return nil
}

func onlyGet(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, r.Method+" is not allowed here: only GET", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
