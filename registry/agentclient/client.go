// Package agentclient is vireo-apiserver's one way to the node agents: it finds the node agent Pod
// of a node (by its Pod IP, from a Pod informer limited to the node agents' namespace and label)
// and reaches it over mutual TLS, presenting vireo-apiserver's client certificate and verifying
// the node agent's serving name.
package agentclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vireo-dev/vireo/internal/certpool"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
)

// Options say where the node agents are and how to reach them.
type Options struct {
	// ClientCertFile and ClientKeyFile are vireo-apiserver's client certificate towards the node
	// agents; CAFile verifies the node agents' serving certificates, which must name ServerName.
	ClientCertFile, ClientKeyFile, CAFile string
	ServerName                            string
	// Namespace and Selector find the node agent Pods; Port is their HTTPS port.
	Namespace, Selector string
	Port                int
}

// NewOptions returns the defaults of artifacts/base.
func NewOptions() *Options {
	return &Options{ServerName: nodeagentapi.ServerName, Namespace: nodeagentapi.Namespace,
		Selector: nodeagentapi.Selector, Port: nodeagentapi.Port}
}

// AddFlags registers the options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCertFile, "nodeagent-client-cert-file", o.ClientCertFile, "Client certificate presented to the node agents (console, VNC); without it those subresources answer 503.")
	fs.StringVar(&o.ClientKeyFile, "nodeagent-client-key-file", o.ClientKeyFile, "Key of --nodeagent-client-cert-file.")
	fs.StringVar(&o.CAFile, "nodeagent-ca-file", o.CAFile, "CA that signed the node agents' serving certificates.")
	fs.StringVar(&o.ServerName, "nodeagent-server-name", o.ServerName, "Name the node agents' serving certificates must hold.")
	fs.StringVar(&o.Namespace, "nodeagent-namespace", o.Namespace, "Namespace of the node agent Pods.")
	fs.StringVar(&o.Selector, "nodeagent-selector", o.Selector, "Label selector of the node agent Pods.")
	fs.IntVar(&o.Port, "nodeagent-port", o.Port, "HTTPS port of the node agents.")
}

// Validate reports inconsistent options.
func (o *Options) Validate() []error {
	var errs []error
	if (o.ClientCertFile == "") != (o.ClientKeyFile == "") || (o.ClientCertFile != "" && o.CAFile == "") {
		errs = append(errs, errors.New("--nodeagent-client-cert-file, --nodeagent-client-key-file and --nodeagent-ca-file go together"))
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		errs = append(errs, fmt.Errorf("--nodeagent-selector %q: %w", o.Selector, err))
	}
	if o.Port <= 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--nodeagent-port %d: not a port", o.Port))
	}
	return errs
}

// Client reaches node agents. A nil *Client (no certificate configured, or no core API) refuses
// with a reason.
type Client struct {
	opts      Options
	pods      corelisters.PodLister
	synced    cache.InformerSynced
	transport *http.Transport
	start     func(stop <-chan struct{})
}

// New builds a client; Start must run before it answers.
func New(o *Options, kube kubernetes.Interface) (*Client, error) {
	if o.ClientCertFile == "" {
		return nil, nil
	}
	roots, err := certpool.FromFile(o.CAFile)
	if err != nil {
		return nil, fmt.Errorf("--nodeagent-ca-file: %w", err)
	}
	if _, err := tls.LoadX509KeyPair(o.ClientCertFile, o.ClientKeyFile); err != nil {
		return nil, fmt.Errorf("--nodeagent-client-cert-file: %w", err)
	}
	certFile, keyFile := o.ClientCertFile, o.ClientKeyFile
	tlsCfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    roots,
		ServerName: o.ServerName,
		// Read at each handshake, so a renewed certificate is used without a restart.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(certFile, keyFile)
			return &c, err
		},
	}
	sel, err := labels.Parse(o.Selector)
	if err != nil {
		return nil, err
	}
	f := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithNamespace(o.Namespace),
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = sel.String() }))
	pods := f.Core().V1().Pods()
	c := &Client{opts: *o, pods: pods.Lister(), synced: pods.Informer().HasSynced,
		transport: &http.Transport{TLSClientConfig: tlsCfg, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: false},
		start: f.Start}
	return c, nil
}

// Start starts the Pod informer.
func (c *Client) Start(stop <-chan struct{}) {
	if c != nil {
		c.start(stop)
	}
}

// Transport is the mutual-TLS transport to the node agents.
func (c *Client) Transport() *http.Transport { return c.transport }

// Location is the URL of path (with query) on the node agent of node.
func (c *Client) Location(node, path string, query url.Values) (*url.URL, error) {
	if c == nil {
		return nil, errors.New("vireo-apiserver has no client certificate for the node agents (--nodeagent-client-cert-file)")
	}
	if !c.synced() {
		return nil, errors.New("vireo-apiserver has not listed the node agents yet")
	}
	if node == "" {
		return nil, errors.New("the VMI has no node")
	}
	pods, err := c.pods.Pods(c.opts.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil && p.Status.PodIP != "" && ready(p) {
			return &url.URL{Scheme: "https", Host: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(c.opts.Port)), Path: path, RawQuery: query.Encode()}, nil
		}
	}
	return nil, fmt.Errorf("no ready node agent on node %s (Pods %s in namespace %s)", node, c.opts.Selector, c.opts.Namespace)
}

// WithoutCredentials is a copy of req, relayed to a node agent, without the user's credentials
// or identity headers: the node agent trusts vireo-apiserver's certificate, not headers.
func WithoutCredentials(req *http.Request) *http.Request {
	out := req.Clone(req.Context())
	for name := range out.Header {
		l := strings.ToLower(name)
		if l == "authorization" || strings.HasPrefix(l, "impersonate-") || strings.HasPrefix(l, "x-remote-") {
			out.Header.Del(name)
		}
	}
	return out
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
