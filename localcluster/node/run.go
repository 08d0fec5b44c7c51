package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vkklog "github.com/virtual-kubelet/virtual-kubelet/log/klogv2"
	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Port is the node API's port, the kubelet's.
const Port = 10250

// Config is one local node.
type Config struct {
	// Name is the Node's name and its kubernetes.io/hostname label.
	Name string
	// Address is the node's InternalIP in its network namespace; the node API listens there.
	Address net.IP
	// Root is the node's directory (pods, logs, volumes, CNI state).
	Root string
	// BinDir holds the binaries images map to.
	BinDir string
	// Self is the container shim binary (vireo-local-shim), which runs as the shim and the init of every container.
	Self string
	// Kubeconfig authenticates the node as system:node:<Name>.
	Kubeconfig string
	// ServingCert and ServingKey are the node API's certificate; ClientCA verifies the client
	// certificates of its callers (kube-apiserver's kubelet client).
	ServingCert, ServingKey, ClientCA string
	// Share divides the host's CPUs and memory: each of Share nodes reports 1/Share of them.
	Share int
	// NetnsPrefix names the Pods' network namespaces, unique per installation.
	NetnsPrefix string
	// KubernetesService is the kubernetes Service's ClusterIP and port, given to every
	// container as KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT.
	KubernetesService net.TCPAddr
}

// Run registers the node, keeps it Ready with a Lease, runs the Pods bound to it and serves
// the node API (logs, exec) until ctx ends. It is built from virtual-kubelet's controllers
// rather than its nodeutil.Node, whose cluster-wide Secret and ConfigMap informers the Node
// authorizer refuses: a node may read only the objects of its own Pods.
func Run(ctx context.Context, cfg Config) error {
	vklog.L = vkklog.New(nil)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	status := newNodeStatus(client, cfg)
	provider, err := newProvider(client, cfg, status)
	if err != nil {
		return err
	}
	nodes, err := vknode.NewNodeController(status, status.initial(), client.CoreV1().Nodes(),
		vknode.WithNodeEnableLeaseV1(nodeutil.NodeLeaseV1Client(client), 0),
		vknode.WithNodeStatusUpdateInterval(30*time.Second))
	if err != nil {
		return err
	}
	go func() {
		if err := nodes.Run(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "node controller stopped")
			os.Exit(1)
		}
	}()
	select {
	case <-nodes.Ready():
	case <-ctx.Done():
		return ctx.Err()
	}
	go status.watchPodCIDR(ctx)
	pods, err := startPodController(ctx, client, cfg.Name, provider)
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- pods.Run(ctx, 4) }()
	go func() { errs <- serve(ctx, client, cfg, provider) }()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
		return nil
	}
}

// startPodController wires virtual-kubelet's Pod controller to the provider. Pods come from
// an informer limited to this node (the only Pod list the Node authorizer allows); the
// Secret and ConfigMap informers it requires are never started, since the provider
// resolves environments itself once the Pod has its IP.
func startPodController(ctx context.Context, client kubernetes.Interface, name string, p *Provider) (*vknode.PodController, error) {
	podFactory := informers.NewSharedInformerFactoryWithOptions(client, time.Minute, nodeutil.PodInformerFilter(name))
	svcFactory := informers.NewSharedInformerFactory(client, time.Minute)
	unused := informers.NewSharedInformerFactory(client, 0)
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "vireo-local-node", Host: name})
	p.events = recorder
	pc, err := vknode.NewPodController(vknode.PodControllerConfig{
		PodClient:                 client.CoreV1(),
		PodInformer:               podFactory.Core().V1().Pods(),
		EventRecorder:             recorder,
		Provider:                  p,
		ConfigMapInformer:         unused.Core().V1().ConfigMaps(),
		SecretInformer:            unused.Core().V1().Secrets(),
		ServiceInformer:           svcFactory.Core().V1().Services(),
		SkipDownwardAPIResolution: true,
	})
	if err != nil {
		return nil, err
	}
	p.services = svcFactory.Core().V1().Services().Lister()
	podFactory.Start(ctx.Done())
	svcFactory.Start(ctx.Done())
	podFactory.WaitForCacheSync(ctx.Done())
	svcFactory.WaitForCacheSync(ctx.Done())
	go p.removeOrphans(ctx, podFactory.Core().V1().Pods().Lister())
	return pc, nil
}

// serve runs the node API on Address:Port as a kubelet in webhook mode does: a client
// certificate of the cluster CA or a bearer token authenticates the caller, and a
// SubjectAccessReview on nodes/<name> (subresource proxy, log, ...) authorizes each request.
// Anonymous requests are refused.
func serve(ctx context.Context, client kubernetes.Interface, cfg Config, p *Provider) error {
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", cfg.ClientCA)
	if err != nil {
		return err
	}
	auth, err := nodeutil.WebhookAuth(client, cfg.Name, func(c *nodeutil.WebhookAuthConfig) error {
		c.AuthnConfig.ClientCertificateCAContentProvider = ca
		return nil
	})
	if err != nil {
		return err
	}
	handler := api.PodHandler(api.PodHandlerConfig{
		RunInContainer:        p.RunInContainer,
		GetContainerLogs:      p.GetContainerLogs,
		GetPods:               p.GetPods,
		GetPodsFromKubernetes: p.GetPods,
		StreamIdleTimeout:     4 * time.Hour,
		StreamCreationTimeout: 30 * time.Second,
	}, false)
	tlsConfig, err := serverTLS(cfg)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(cfg.Address.String(), strconv.Itoa(Port))
	ln, err := tls.Listen("tcp", addr, tlsConfig)
	if err != nil {
		return fmt.Errorf("node API on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: nodeutil.WithAuth(auth, handler), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serverTLS presents the node's serving certificate and asks for (without requiring) a
// client certificate of the cluster CA: a request without one is refused by the
// authenticator with 401, rather than failing the handshake.
func serverTLS(cfg Config) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(cfg.ServingCert, cfg.ServingKey)
	if err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(cfg.ClientCA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", cfg.ClientCA)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	}, nil
}
