package localcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/vireo-dev/vireo/localcluster/pki"
)

// Options configure an installation.
type Options struct {
	Layout
	// APIServerPort is vireo-apiserver's secure port on 127.0.0.1.
	APIServerPort int
	// Examples are manifests applied once the API is ready (the demo objects).
	Examples []string
	Out      io.Writer
}

// Cluster is a single-machine installation.
type Cluster struct {
	opts Options
	ca   *pki.CA
}

// New prepares an installation; nothing starts until Up.
func New(opts Options) *Cluster { return &Cluster{opts: opts} }

func (c *Cluster) apiServer() Component {
	l := &c.opts.Layout
	return Component{Name: "vireo-apiserver", Path: l.Bin("vireo-apiserver"), Dir: l, Args: []string{
		"--data-dir", l.Data("vireo-apiserver"),
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(c.opts.APIServerPort),
		"--tls-cert-file", l.PKI() + "/vireo-apiserver.crt",
		"--tls-private-key-file", l.PKI() + "/vireo-apiserver.key",
		"--client-ca-file", l.PKI() + "/ca.crt",
	}}
}

// Components lists the processes of the installation, in start order.
func (c *Cluster) Components() []Component { return []Component{c.apiServer()} }

// Up starts whatever is not running and returns once the API answers. On failure it
// stops what it started and reports the failing component's log.
func (c *Cluster) Up(ctx context.Context) error {
	if err := c.certificates(); err != nil {
		return fmt.Errorf("creating certificates in %s: %w", c.opts.PKI(), err)
	}
	var started []Component
	for _, comp := range c.Components() {
		if pid, ok := comp.PID(); ok {
			c.say("%s already running (pid %d)", comp.Name, pid)
			continue
		}
		if _, err := os.Stat(comp.Path); err != nil {
			return fmt.Errorf("%s: binary %s missing; run `make build` first", comp.Name, comp.Path)
		}
		c.say("starting %s (log: %s)", comp.Name, comp.LogFile())
		if err := comp.Start(); err != nil {
			c.stopAll(started)
			return err
		}
		started = append(started, comp)
	}
	if err := c.writeKubeconfig(); err != nil {
		c.stopAll(started)
		return err
	}
	c.say("waiting for vireo-apiserver to become ready")
	if err := c.waitReady(ctx, c.apiServer()); err != nil {
		c.stopAll(started)
		return err
	}
	if err := c.applyExamples(ctx); err != nil {
		return fmt.Errorf("applying the demo objects: %w", err)
	}
	c.say("Vireo is up. Try:\n  export KUBECONFIG=%s", c.opts.Kubeconfig())
	return nil
}

// Down stops every component; purge also deletes all data, certificates and logs.
func (c *Cluster) Down(purge bool) error {
	comps := c.Components()
	for i := len(comps) - 1; i >= 0; i-- {
		c.say("stopping %s", comps[i].Name)
		if err := comps[i].Stop(30 * time.Second); err != nil {
			return err
		}
	}
	if purge {
		c.say("deleting %s", c.opts.Root)
		return os.RemoveAll(c.opts.Root)
	}
	return nil
}

// Status prints each component and whether the API answers.
func (c *Cluster) Status(ctx context.Context) {
	for _, comp := range c.Components() {
		if pid, ok := comp.PID(); ok {
			c.say("%-18s running (pid %d), log %s", comp.Name, pid, comp.LogFile())
		} else {
			c.say("%-18s stopped", comp.Name)
		}
	}
	cfg, err := c.RESTConfig()
	if err == nil {
		err = ready(ctx, cfg)
	}
	if err != nil {
		c.say("API: not ready: %v", err)
		return
	}
	c.say("API: ready at %s", cfg.Host)
}

func (c *Cluster) certificates() error {
	ca, err := pki.LoadOrCreateCA(c.opts.PKI(), "ca", "vireo-local-ca")
	if err != nil {
		return err
	}
	c.ca = ca
	if _, err := ca.ServingCert("vireo-apiserver", []string{"localhost", "vireo-apiserver"}, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return err
	}
	_, err = ca.ClientCert("admin", "vireo-admin", []string{"system:masters"})
	return err
}

func (c *Cluster) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["vireo-local"] = &clientcmdapi.Cluster{
		Server:               fmt.Sprintf("https://127.0.0.1:%d", c.opts.APIServerPort),
		CertificateAuthority: c.abs(c.opts.PKI() + "/ca.crt"),
	}
	cfg.AuthInfos["vireo-admin"] = &clientcmdapi.AuthInfo{
		ClientCertificate: c.abs(c.opts.PKI() + "/admin.crt"),
		ClientKey:         c.abs(c.opts.PKI() + "/admin.key"),
	}
	cfg.Contexts["vireo-local"] = &clientcmdapi.Context{Cluster: "vireo-local", AuthInfo: "vireo-admin", Namespace: "default"}
	cfg.CurrentContext = "vireo-local"
	return clientcmd.WriteToFile(*cfg, c.opts.Kubeconfig())
}

// RESTConfig reads the admin kubeconfig.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.opts.Kubeconfig())
}

func (c *Cluster) waitReady(ctx context.Context, comp Component) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, alive := comp.PID(); !alive {
			return false, fmt.Errorf("%s exited", comp.Name)
		}
		lastErr = ready(ctx, cfg)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become ready (%v; last probe: %v). Log %s ends with:\n%s",
			comp.Name, err, lastErr, comp.LogFile(), comp.LogTail(20))
	}
	return nil
}

func ready(ctx context.Context, cfg *rest.Config) error {
	client, err := rest.UnversionedRESTClientFor(withNegotiatedSerializer(cfg))
	if err != nil {
		return err
	}
	_, err = client.Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

func (c *Cluster) stopAll(comps []Component) {
	for i := len(comps) - 1; i >= 0; i-- {
		_ = comps[i].Stop(10 * time.Second)
	}
}

func (c *Cluster) say(format string, args ...any) {
	if c.opts.Out != nil {
		fmt.Fprintf(c.opts.Out, format+"\n", args...)
	}
}
