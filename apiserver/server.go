package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/apiserver/embeddedetcd"
	"github.com/vireo-dev/vireo/apiserver/watchcache"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/vmistream"
)

// Config is vireo-apiserver's configuration: the generic server's plus Vireo's scheme.
type Config struct {
	Generic *genericapiserver.RecommendedConfig
	Scheme  *runtime.Scheme
	Codecs  serializer.CodecFactory
	// NodeAgents say how console and VNC reach the node agents.
	NodeAgents *agentclient.Options
}

// CompletedConfig is a Config whose defaults are filled in; only it can build a Server.
type CompletedConfig struct {
	generic genericapiserver.CompletedConfig
	scheme  *runtime.Scheme
	codecs  serializer.CodecFactory
	agents  *agentclient.Options
	kube    *rest.Config
}

// Complete fills in the generic server's derived settings.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{generic: c.Generic.Complete(), scheme: c.Scheme, codecs: c.Codecs, agents: c.NodeAgents, kube: c.Generic.ClientConfig}
}

// Server is a vireo-apiserver ready to run.
type Server struct {
	Generic *genericapiserver.GenericAPIServer
}

// New builds the server and installs Vireo's API groups.
func (c CompletedConfig) New() (*Server, error) {
	gs, err := c.generic.New("vireo-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	kube, err := c.kubeClient()
	if err != nil {
		return nil, err
	}
	agents, err := c.nodeAgentClient(kube)
	if err != nil {
		return nil, err
	}
	deps := groupDeps{scheme: c.scheme, codecs: c.codecs, getter: watchcache.RESTOptionsGetter(c.generic.RESTOptionsGetter), agents: agents,
		authz: c.generic.Authorization.Authorizer, kube: kube, streams: vmistream.NewSessions()}
	if err := installAPIGroups(gs, deps); err != nil {
		return nil, err
	}
	// At once when told to stop (before --shutdown-delay-duration): the consoles and VNC
	// sessions end saying so, and their clients connect again through another replica.
	if err := gs.AddPreShutdownHook("vireo-stream-sessions", func() error {
		deps.streams.GoAway()
		return nil
	}); err != nil {
		return nil, err
	}
	if err := installInfoEndpoints(gs, c.kube); err != nil {
		return nil, err
	}
	if agents != nil {
		if err := gs.AddPostStartHook("vireo-nodeagent-informer", func(ctx genericapiserver.PostStartHookContext) error {
			agents.Start(ctx.Done())
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return &Server{Generic: gs}, nil
}

// kubeClient reaches kube-apiserver; nil standalone (no core API).
func (c CompletedConfig) kubeClient() (kubernetes.Interface, error) {
	if c.kube == nil {
		return nil, nil
	}
	return kubernetes.NewForConfig(c.kube)
}

// nodeAgentClient builds the client to the node agents; nil (console and VNC answer 503 with
// the reason) without a client certificate or without the core API (standalone).
func (c CompletedConfig) nodeAgentClient(kube kubernetes.Interface) (*agentclient.Client, error) {
	if c.agents == nil || c.agents.ClientCertFile == "" {
		return nil, nil
	}
	if kube == nil {
		klog.InfoS("No core API: console and VNC are unavailable (node agents are found through their Pods)")
		return nil, nil
	}
	return agentclient.New(c.agents, kube)
}

// Instance is a built server with its storage running, not yet serving.
type Instance struct {
	Server *Server
	// LoopbackConfig reaches the server as system:apiserver (in-process clients, tests).
	LoopbackConfig *rest.Config
	etcd           *embeddedetcd.Server
}

// Start completes and validates the options, starts the embedded etcd when no
// external one is configured, and builds the server.
func Start(ctx context.Context, o *Options) (*Instance, error) {
	if err := o.Complete(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	inst := &Instance{}
	if o.EmbeddedEtcd {
		etcd, err := embeddedetcd.Start(ctx, o.DataDir)
		if err != nil {
			return nil, err
		}
		inst.etcd = etcd
		klog.InfoS("Embedded etcd ready", "endpoint", etcd.ClientURL)
	}
	cfg, err := o.Config()
	if err != nil {
		inst.closeEtcd()
		return nil, err
	}
	srv, err := cfg.Complete().New()
	if err != nil {
		inst.closeEtcd()
		return nil, err
	}
	inst.Server = srv
	inst.LoopbackConfig = rest.CopyConfig(cfg.Generic.LoopbackClientConfig)
	return inst, nil
}

// Run serves until ctx ends (or the embedded etcd fails), then stops the etcd.
func (i *Instance) Run(ctx context.Context) error {
	defer i.closeEtcd()
	if i.etcd != nil {
		ctx = stopOnEtcdFailure(ctx, i.etcd)
	}
	return i.Server.Generic.PrepareRun().RunWithContext(ctx)
}

func (i *Instance) closeEtcd() {
	if i.etcd != nil {
		i.etcd.Close()
	}
}

// Run starts vireo-apiserver and serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	inst, err := Start(ctx, o)
	if err != nil {
		return err
	}
	return inst.Run(ctx)
}

// stopOnEtcdFailure ends the returned context when the embedded etcd fails, so the
// server exits instead of serving errors forever.
func stopOnEtcdFailure(ctx context.Context, etcd *embeddedetcd.Server) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case err := <-etcd.Err():
			klog.ErrorS(err, "Embedded etcd failed; stopping")
			cancel(fmt.Errorf("embedded etcd failed: %w", err))
		case <-ctx.Done():
		}
	}()
	return ctx
}
