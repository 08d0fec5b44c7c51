package localcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vireo-dev/vireo/internal/certpool"
)

// Ports are the ports of the host-side components: etcd, kube-controller-manager and
// kube-scheduler listen on loopback, kube-apiserver and the registry on the bridge's address
// (Network.HostIP). Vireo's own components are Pods on the local nodes.
type Ports struct {
	EtcdClient, EtcdPeer, KubeAPIServer, ControllerManager, Scheduler int
	// Registry is the OCI registry's port; 0 means DefaultRegistryPort, or the next port
	// up that no other field uses (installations recorded before the registry existed have 0).
	Registry int
	// VireoEtcd is the first client port of an HA installation's vireo-etcd members, on the
	// bridge's address; 0 means DefaultVireoEtcdPort.
	VireoEtcd int `json:",omitempty"`
}

// DefaultRegistryPort is the registry's usual port (Docker's registry's).
const DefaultRegistryPort = 5000

// DefaultPorts are the usual Kubernetes ports, and 5000 for the registry.
func DefaultPorts() Ports {
	return Ports{EtcdClient: 2379, EtcdPeer: 2380, KubeAPIServer: 6443, ControllerManager: 10257, Scheduler: 10259,
		Registry: DefaultRegistryPort}
}

// RegistryPort is the registry's port: Registry if set, else DefaultRegistryPort unless
// another component's port is that, then the next free one up.
func (p Ports) RegistryPort() int {
	if p.Registry != 0 {
		return p.Registry
	}
	taken := map[int]bool{p.EtcdClient: true, p.EtcdPeer: true, p.KubeAPIServer: true, p.ControllerManager: true, p.Scheduler: true}
	port := DefaultRegistryPort
	for taken[port] {
		port++
	}
	return port
}

func (c *Cluster) etcd() Component {
	l, p := &c.opts.Layout, c.opts.Ports
	client := fmt.Sprintf("https://127.0.0.1:%d", p.EtcdClient)
	peer := fmt.Sprintf("https://127.0.0.1:%d", p.EtcdPeer)
	return Component{Name: "etcd", Path: c.abs(l.Bin("etcd")), Dir: l, Args: []string{
		"--name", "vireo-local",
		"--data-dir", c.abs(l.Data("etcd")),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "vireo-local=" + peer,
		"--cert-file", c.pkiFile(etcdServer + ".crt"), "--key-file", c.pkiFile(etcdServer + ".key"),
		"--trusted-ca-file", c.pkiFile(etcdCA + ".crt"), "--client-cert-auth",
		"--peer-cert-file", c.pkiFile(etcdPeer + ".crt"), "--peer-key-file", c.pkiFile(etcdPeer + ".key"),
		"--peer-trusted-ca-file", c.pkiFile(etcdCA + ".crt"), "--peer-client-cert-auth",
		"--log-level", "warn",
	}, Ready: httpsReady(client+"/health", c.pkiFile(etcdCA+".crt"), c.pkiFile(apiServerEtcdCert))}
}

// kubeAPIServer listens on one address only (--bind-address takes one): the host end of
// the network namespace's link. vireo-apiserver in the namespace reaches it there, and so
// does every client on the host, since the address is the host's own. It is not bound on the
// machine's other addresses; a neighbour that routes 10.250.0.0/24 to this machine could still
// reach it (Linux accepts packets for a local address on any interface), where RBAC protects it.
func (c *Cluster) kubeAPIServer() Component {
	l, p, nw := &c.opts.Layout, c.opts.Ports, c.opts.Network
	return Component{Name: "kube-apiserver", Path: c.abs(l.Bin("kube-apiserver")), Dir: l, Args: []string{
		"--advertise-address", nw.HostIP.String(),
		"--bind-address", nw.HostIP.String(),
		"--secure-port", strconv.Itoa(p.KubeAPIServer),
		"--etcd-servers", fmt.Sprintf("https://127.0.0.1:%d", p.EtcdClient),
		"--etcd-cafile", c.pkiFile(etcdCA + ".crt"),
		"--etcd-certfile", c.pkiFile(apiServerEtcdCert + ".crt"), "--etcd-keyfile", c.pkiFile(apiServerEtcdCert + ".key"),
		"--tls-cert-file", c.pkiFile("kube-apiserver.crt"), "--tls-private-key-file", c.pkiFile("kube-apiserver.key"),
		"--client-ca-file", c.pkiFile("ca.crt"),
		"--authorization-mode", "Node,RBAC",
		"--enable-admission-plugins", "NodeRestriction",
		"--kubelet-client-certificate", c.pkiFile(kubeletClientUser + ".crt"),
		"--kubelet-client-key", c.pkiFile(kubeletClientUser + ".key"),
		"--kubelet-certificate-authority", c.pkiFile("ca.crt"),
		"--kubelet-preferred-address-types", "InternalIP",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", c.pkiFile("sa.pub"),
		"--service-account-signing-key-file", c.pkiFile("sa.key"),
		"--service-cluster-ip-range", serviceCIDR,
		"--requestheader-client-ca-file", c.pkiFile("front-proxy-ca.crt"),
		"--requestheader-allowed-names", frontProxyUser,
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", c.pkiFile("front-proxy-client.crt"),
		"--proxy-client-key-file", c.pkiFile("front-proxy-client.key"),
		"--enable-aggregator-routing=true",
		"--profiling=false",
	}, Ready: c.apiReady,
		// It keeps nothing to flush (etcd does), and its HTTP server waits up to 60 s for the
		// watches of Pods that died with their network namespace, whose connections never
		// closed: `down` waited out its whole 30 s grace on it every time.
		StopGrace: 5 * time.Second}
}

// KubeAPIServerURL is where every client, on the host or in the network namespace,
// reaches kube-apiserver.
func (c *Cluster) KubeAPIServerURL() string {
	return "https://" + net.JoinHostPort(c.opts.Network.HostIP.String(), strconv.Itoa(c.opts.Ports.KubeAPIServer))
}

func (c *Cluster) controllerManager() Component {
	return c.kubeController("kube-controller-manager", c.opts.Ports.ControllerManager,
		"--service-account-private-key-file", c.pkiFile("sa.key"),
		"--root-ca-file", c.pkiFile("ca.crt"),
		"--use-service-account-credentials=true",
		"--enable-hostpath-provisioner=true",
		"--allocate-node-cidrs=true",
		"--cluster-cidr", c.opts.Network.ClusterCIDR,
		"--node-cidr-mask-size", "24",
		"--service-cluster-ip-range", serviceCIDR,
	)
}

func (c *Cluster) scheduler() Component {
	return c.kubeController("kube-scheduler", c.opts.Ports.Scheduler)
}

// kubeController is kube-controller-manager or kube-scheduler: a client of kube-apiserver
// with its own kubeconfig, a health port on loopback and no leader election (one replica).
func (c *Cluster) kubeController(name string, port int, extra ...string) Component {
	l := &c.opts.Layout
	kc := c.abs(c.kubeconfigPath(name))
	args := append([]string{
		"--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--leader-elect=false",
		"--profiling=false",
	}, extra...)
	if qps := c.opts.ControlPlaneQPS; qps > 0 {
		args = append(args, "--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(2*qps))
	}
	return Component{Name: name, Path: c.abs(l.Bin(name)), Dir: l, Args: args,
		Ready: healthzReady(fmt.Sprintf("https://127.0.0.1:%d/healthz", port), "")}
}

// Components lists the processes of the installation, in start order.
func (c *Cluster) Components() []Component {
	comps := append([]Component{c.etcd(), c.kubeAPIServer()}, c.vireoEtcd()...)
	comps = append(comps, c.controllerManager(), c.scheduler(), c.registry())
	return append(comps, c.nodes()...)
}

// Component returns the named component.
func (c *Cluster) Component(name string) (Component, error) {
	for _, comp := range c.Components() {
		if comp.Name == name {
			return comp, nil
		}
	}
	var names []string
	for _, comp := range c.Components() {
		names = append(names, comp.Name)
	}
	return Component{}, fmt.Errorf("no component %q; the components are %s", name, strings.Join(names, ", "))
}

// healthzReady probes an HTTPS health endpoint; with no CA file it only checks that the
// component answers (kube-controller-manager and kube-scheduler serve self-signed certificates).
func healthzReady(url, caFile string) func(context.Context) error {
	return httpsReady(url, caFile, "")
}

// httpsReady probes an HTTPS health endpoint, verifying the server against caFile and
// presenting the client certificate <clientCert>.crt/.key when given. Verifying the CA
// also tells our component from another installation's on the same port.
func httpsReady(url, caFile, clientCert string) func(context.Context) error {
	return func(ctx context.Context) error {
		tlsConfig := &tls.Config{InsecureSkipVerify: caFile == ""} //nolint:gosec // local self-signed health endpoints
		if clientCert != "" {
			pair, err := tls.LoadX509KeyPair(clientCert+".crt", clientCert+".key")
			if err != nil {
				return err
			}
			tlsConfig.Certificates = []tls.Certificate{pair}
		}
		if caFile != "" {
			pool, err := certpool.FromFile(caFile)
			if err != nil {
				return err
			}
			tlsConfig.RootCAs = pool
		}
		client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
		}
		return nil
	}
}
