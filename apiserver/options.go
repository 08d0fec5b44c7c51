package apiserver

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/vireo-dev/vireo/apiserver/embeddedetcd"
	generatedopenapi "github.com/vireo-dev/vireo/generated/openapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
)

// etcdPathPrefix is where every Vireo object lives in etcd.
const etcdPathPrefix = "/registry/vireo"

// Options are vireo-apiserver's command-line options.
type Options struct {
	Recommended *genericoptions.RecommendedOptions
	// DataDir holds the embedded etcd (used when no --etcd-servers is given) and
	// self-signed serving certificates.
	DataDir string
	// Standalone runs without a kube-apiserver: only client certificates (--client-ca-file)
	// authenticate, only system:masters is authorized and no core-API admission runs.
	// It is chosen automatically when no kubeconfig is given outside a cluster.
	Standalone bool
	// EmbeddedEtcd is set by Complete when no --etcd-servers was given.
	EmbeddedEtcd bool
	// ShutdownSendRetryAfter answers new requests with 429 and Retry-After while shutting
	// down, and closes long-running requests (watches proxied by the aggregator) 2 s after
	// the others drained, instead of waiting up to the request timeout for them.
	ShutdownSendRetryAfter bool
	// ShutdownWatchTerminationGracePeriod is how long shutdown waits for open watches to
	// end; they are told to end as soon as the server stops accepting requests, so they
	// close cleanly (the client re-establishes them) instead of being cut when the HTTP
	// server's shutdown times out.
	ShutdownWatchTerminationGracePeriod time.Duration
	// ShutdownDelayDuration is how long the server keeps serving after it was told to stop,
	// with /readyz failing: long enough for its endpoint to be withdrawn from the
	// aggregator's rotation before it stops accepting connections. 0 (the default) suits a
	// single replica, which no one else can stand in for.
	ShutdownDelayDuration time.Duration
	// NodeAgents say how console and VNC reach the node agents.
	NodeAgents *agentclient.Options

	scheme *runtime.Scheme
	codecs serializer.CodecFactory
}

// NewOptions returns options with Vireo's defaults.
func NewOptions() *Options {
	scheme, codecs := NewScheme()
	ro := genericoptions.NewRecommendedOptions(etcdPathPrefix, codecs.LegacyCodec(StorageVersions...))
	ro.Etcd.StorageConfig.EncodeVersioner = StorageVersions
	ro.SecureServing.BindPort = 8443
	ro.SecureServing.ServerCert.PairName = "apiserver"
	// Self-signed serving certificates go under --data-dir unless --cert-dir says otherwise.
	ro.SecureServing.ServerCert.CertDirectory = ""
	return &Options{Recommended: ro, DataDir: "_output/apiserver", ShutdownSendRetryAfter: true,
		ShutdownWatchTerminationGracePeriod: 5 * time.Second, NodeAgents: agentclient.NewOptions(), scheme: scheme, codecs: codecs}
}

// AddFlags registers every option on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Recommended.AddFlags(fs)
	o.NodeAgents.AddFlags(fs)
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "Directory for the embedded etcd (used when --etcd-servers is empty) and generated serving certificates.")
	fs.BoolVar(&o.ShutdownSendRetryAfter, "shutdown-send-retry-after", o.ShutdownSendRetryAfter, "While shutting down, answer new requests with 429 and Retry-After, and close watches 2s after other requests drained.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration, "When told to stop, keep serving this long with /readyz failing, so that load balancers and kube-apiserver's aggregator stop sending requests first (with several replicas; 0 with one).")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod, "While shutting down, end open watches and wait up to this long for them to close (0: leave them to be cut when the HTTP server stops).")
}

// EmbedsEtcd reports whether the server runs its own etcd (no --etcd-servers given).
func (o *Options) EmbedsEtcd() bool {
	return len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 || o.EmbeddedEtcd
}

// Complete fills in derived settings: the certificate directory, the embedded etcd endpoint
// (when --etcd-servers is empty) and standalone mode.
func (o *Options) Complete() error {
	if o.Recommended.SecureServing.ServerCert.CertDirectory == "" {
		o.Recommended.SecureServing.ServerCert.CertDirectory = filepath.Join(o.DataDir, "certs")
	}
	if len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 {
		if o.DataDir == "" {
			return fmt.Errorf("--data-dir is required when --etcd-servers is empty (the embedded etcd stores its data there)")
		}
		url, err := embeddedetcd.ClientURL(o.DataDir)
		if err != nil {
			return fmt.Errorf("--data-dir %q: %w", o.DataDir, err)
		}
		o.EmbeddedEtcd = true
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{url}
	}
	inCluster := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	noKubeconfig := o.Recommended.Authentication.RemoteKubeConfigFile == "" &&
		(o.Recommended.CoreAPI == nil || o.Recommended.CoreAPI.CoreAPIKubeconfigPath == "")
	if noKubeconfig && !inCluster {
		o.Standalone = true
	}
	if o.Standalone {
		klog.InfoS("No kubeconfig and not in a cluster: running standalone (client-certificate authentication, system:masters only, no core-API admission or priority and fairness)")
		o.Recommended.Authentication.RemoteKubeConfigFileOptional = true
		o.Recommended.Authorization.RemoteKubeConfigFileOptional = true
		o.Recommended.CoreAPI = nil
		o.Recommended.Admission = nil
		// Priority and fairness reads its configuration from the core API.
		o.Recommended.Features.EnablePriorityAndFairness = false
	}
	return nil
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	errs := o.Recommended.Validate()
	errs = append(errs, o.NodeAgents.Validate()...)
	if o.ShutdownDelayDuration < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay-duration %s: must not be negative", o.ShutdownDelayDuration))
	}
	if o.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period %s: must not be negative (0 turns it off)", o.ShutdownWatchTerminationGracePeriod))
	}
	return utilerrors.NewAggregate(errs)
}

// Config turns completed options into a server configuration.
func (o *Options) Config() (*Config, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("creating self-signed serving certificates in %q: %w", o.Recommended.SecureServing.ServerCert.CertDirectory, err)
	}

	gc := genericapiserver.NewRecommendedConfig(o.codecs)
	namer := openapi.NewDefinitionNamer(o.scheme)
	gc.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIConfig.Info.Title = "Vireo"
	gc.OpenAPIConfig.Info.Version = "v1"
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIV3Config.Info.Title = "Vireo"
	gc.OpenAPIV3Config.Info.Version = "v1"
	gc.FeatureGate = utilfeature.DefaultFeatureGate
	gc.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")

	if err := o.Recommended.ApplyTo(gc); err != nil {
		return nil, err
	}
	// Console and VNC sessions last as long as the user keeps them: no request timeout, and
	// they are not counted against the in-flight limits of ordinary requests.
	gc.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), sets.NewString(longRunningSubresources...))
	gc.ShutdownSendRetryAfter = o.ShutdownSendRetryAfter
	gc.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod
	gc.ShutdownDelayDuration = o.ShutdownDelayDuration
	gc.Authorization.Authorizer = withAnyNameFirst(gc.Authorization.Authorizer)
	buildChain := gc.BuildHandlerChainFunc
	gc.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return buildChain(withDeprecationWarnings(h), c)
	}
	if rh := gc.Authentication.RequestHeaderConfig; rh != nil && gc.SecureServing != nil && gc.SecureServing.Listener != nil {
		gc.AddReadyzChecks(frontProxyAccepted(rh.CAContentProvider, gc.SecureServing.Listener.Addr().String()))
	}
	return &Config{Generic: gc, Scheme: o.scheme, Codecs: o.codecs, NodeAgents: o.NodeAgents}, nil
}
