// Package metricsserver is the HTTPS endpoint vireo-controller and vireo-nodeagent serve their
// Prometheus metrics on: /metrics, with the caller authenticated by kube-apiserver through a
// TokenReview and authorized by a SubjectAccessReview for get on the non-resource URL /metrics,
// as kube components do, and /healthz open. It serves what is registered in component-base's
// legacy registry, the workqueue metrics of every named queue included.
package metricsserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/options"
	"k8s.io/component-base/metrics/legacyregistry"
	// The workqueue metrics (workqueue_depth, workqueue_adds_total, ...) of every named queue.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
)

// DefaultPort is the HTTPS port of /metrics.
const DefaultPort = 8443

// Options say where and how /metrics is served.
type Options struct {
	Serving        *options.SecureServingOptions
	Authentication *options.DelegatingAuthenticationOptions
	Authorization  *options.DelegatingAuthorizationOptions
}

// NewOptions serves on DefaultPort with a self-signed certificate for component (the pair's
// name, e.g. vireo-controller) kept in memory unless --tls-cert-file is given; callers are
// authenticated by bearer token only (Prometheus's ServiceAccount token), so the component
// needs no access to kube-system's client CA. A caller without a token is system:anonymous,
// whom RBAC refuses (403), as with kube's own components.
func NewOptions(component string) *Options {
	serving := options.NewSecureServingOptions()
	serving.BindPort = DefaultPort
	serving.ServerCert.CertDirectory = ""
	serving.ServerCert.PairName = component
	authn := options.NewDelegatingAuthenticationOptions()
	authn.SkipInClusterLookup = true
	authn.RemoteKubeConfigFileOptional = true
	authz := options.NewDelegatingAuthorizationOptions().WithAlwaysAllowPaths("/healthz")
	authz.RemoteKubeConfigFileOptional = true
	return &Options{Serving: serving, Authentication: authn, Authorization: authz}
}

// AddFlags registers the serving and delegation flags (--secure-port 0 turns /metrics off).
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Serving.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

// Serve serves /metrics and /healthz until ctx ends; kubeconfig (empty: in-cluster) reaches
// kube-apiserver for the reviews unless the delegation flags name another.
func (o *Options) Serve(ctx context.Context, kubeconfig string) error {
	if o.Serving.BindPort == 0 {
		klog.InfoS("Metrics are off (--secure-port 0)")
		return nil
	}
	if err := o.Serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, nil); err != nil {
		return err
	}
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = kubeconfig
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = kubeconfig
	}
	var serving *server.SecureServingInfo
	if err := o.Serving.ApplyTo(&serving); err != nil {
		return fmt.Errorf("metrics serving: %w", err)
	}
	var authn server.AuthenticationInfo
	if err := o.Authentication.ApplyTo(&authn, serving, nil); err != nil {
		return fmt.Errorf("metrics authentication: %w", err)
	}
	var authz server.AuthorizationInfo
	if err := o.Authorization.ApplyTo(&authz); err != nil {
		return fmt.Errorf("metrics authorization: %w", err)
	}
	_, stopped, err := serving.Serve(handler(authn, authz), 5*time.Second, ctx.Done())
	if err != nil {
		return fmt.Errorf("serving metrics: %w", err)
	}
	klog.InfoS("Serving metrics", "address", serving.Listener.Addr().String())
	<-stopped
	return nil
}

// handler is /metrics and /healthz behind authentication and authorization.
func handler(authn server.AuthenticationInfo, authz server.AuthorizationInfo) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", legacyregistry.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	// The refusals (401, 403) are metav1.Status objects: the scheme must know them.
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	codecs := serializer.NewCodecFactory(scheme)
	var h http.Handler = mux
	h = genericfilters.WithAuthorization(h, authz.Authorizer, codecs)
	h = genericfilters.WithAuthentication(h, authn.Authenticator, genericfilters.Unauthorized(codecs), nil, nil)
	return genericfilters.WithRequestInfo(h, &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")})
}
