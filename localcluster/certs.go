package localcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster/pki"
)

// Identities of the installation's clients (certificate CN and groups).
const (
	adminUser = "vireo-local-admin"
	// apiServerUser is vireo-apiserver's identity towards kube-apiserver: the user name of
	// its ServiceAccount, so artifacts/base RBAC applies to it unchanged.
	apiServerUser = v1.APIServerUser
	// controllerUser is vireo-controller's identity, its ServiceAccount's user name.
	controllerUser = v1.ControllerUser
	// frontProxyUser is the name vireo-apiserver accepts front-proxy requests from.
	frontProxyUser = "front-proxy-client"
)

// serviceCIDR is the ClusterIP range; its first address is the kubernetes Service's.
const serviceCIDR = "10.96.0.0/16"

var serviceIP = net.IPv4(10, 96, 0, 1)

// Files of etcd's own PKI. etcd trusts only its CA, which issues nothing but etcd's
// server and peer certificates and kube-apiserver's etcd client certificate: no
// certificate of the Kubernetes or front-proxy CA (users, controllers, tests) opens etcd.
const (
	etcdCA            = "etcd-ca"
	etcdServer        = "etcd-server"
	etcdPeer          = "etcd-peer"
	apiServerEtcdCert = "apiserver-etcd-client"
)

// obsoleteFiles are certificates and keys earlier versions wrote (etcd's, issued by the
// Kubernetes CA); they are deleted so no such credential stays around.
var obsoleteFiles = []string{"etcd.crt", "etcd.key", "etcd-client.crt", "etcd-client.key"}

// certificates creates every CA, certificate and key the installation needs, once.
func (c *Cluster) certificates() error {
	dir := c.opts.PKI()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-local-ca")
	if err != nil {
		return err
	}
	fp, err := pki.LoadOrCreateCA(dir, "front-proxy-ca", "vireo-local-front-proxy-ca")
	if err != nil {
		return err
	}
	etcd, err := pki.LoadOrCreateCA(dir, etcdCA, "vireo-local-etcd-ca")
	if err != nil {
		return err
	}
	c.ca = ca
	nw := c.opts.Network
	loop := net4(127, 0, 0, 1)
	steps := []func() (pki.Issued, error){
		func() (pki.Issued, error) {
			return ca.ServingCert("kube-apiserver", []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}, []net.IP{loop, nw.HostIP, serviceIP})
		},
		// etcd presents its serving certificate as a client too (to its own gRPC gateway),
		// so it carries both usages, as kubeadm's does.
		func() (pki.Issued, error) { return etcd.PeerCert(etcdServer, []string{"localhost"}, []net.IP{loop}) },
		func() (pki.Issued, error) { return etcd.PeerCert(etcdPeer, []string{"localhost"}, []net.IP{loop}) },
		func() (pki.Issued, error) {
			return etcd.ClientCert(apiServerEtcdCert, "kube-apiserver-etcd-client", nil)
		},
		func() (pki.Issued, error) { return ca.ClientCert("admin", adminUser, []string{"system:masters"}) },
		func() (pki.Issued, error) {
			return ca.ClientCert("kube-controller-manager", "system:kube-controller-manager", nil)
		},
		func() (pki.Issued, error) { return ca.ClientCert("kube-scheduler", "system:kube-scheduler", nil) },
		func() (pki.Issued, error) { return fp.ClientCert("front-proxy-client", frontProxyUser, nil) },
		func() (pki.Issued, error) { return pki.SigningKey(dir, "sa") },
	}
	for _, step := range steps {
		if _, err := step(); err != nil {
			return err
		}
	}
	if err := c.nodeCertificates(ca); err != nil {
		return err
	}
	for _, f := range obsoleteFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("deleting the obsolete %s: %w", f, err)
		}
	}
	return nil
}

// pkiFile is the path of a file in the PKI directory.
func (c *Cluster) pkiFile(name string) string { return c.abs(filepath.Join(c.opts.PKI(), name)) }

func net4(a, b, c, d byte) net.IP { return net.IPv4(a, b, c, d) }

// NodeAgentServerName is the name in every node agent's serving certificate; vireo-apiserver
// verifies it instead of the agent's Pod address.
const NodeAgentServerName = "vireo-nodeagent.vireo-system.svc"

// WriteArtifactCerts writes the certificates artifacts/base expects into dir: a CA with
// vireo-apiserver's serving pair and the node agents' serving pair with vireo-apiserver's
// client pair for them; and etcd's own CA with etcd's server, peer and client pairs, for the
// in-cluster service names. etcd trusts only its own CA, so no certificate a node holds (the
// node agents') opens the store of every Vireo object.
func WriteArtifactCerts(dir string) error {
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-ca")
	if err != nil {
		return err
	}
	etcdCA, err := pki.LoadOrCreateCA(dir, "etcd-ca", "vireo-etcd-ca")
	if err != nil {
		return err
	}
	etcdNames := []string{"vireo-etcd", "vireo-etcd.vireo-system.svc", "vireo-etcd-client.vireo-system.svc", "*.vireo-etcd.vireo-system.svc", "*.vireo-etcd.vireo-system.svc.cluster.local", "localhost"}
	if _, err := ca.ServingCert("apiserver", []string{"vireo-apiserver.vireo-system.svc", "vireo-apiserver.vireo-system.svc.cluster.local"}, nil); err != nil {
		return err
	}
	if _, err := etcdCA.ServingCert("etcd-server", etcdNames, []net.IP{net4(127, 0, 0, 1)}); err != nil {
		return err
	}
	if _, err := etcdCA.PeerCert("etcd-peer", etcdNames, nil); err != nil {
		return err
	}
	if _, err := etcdCA.ClientCert("etcd-client", "vireo-apiserver", nil); err != nil {
		return fmt.Errorf("etcd client certificate: %w", err)
	}
	// vireo-apiserver names the node agent it dials by this name, whatever the Pod's address.
	// The agents present the same certificate to each other (live migration between nodes),
	// so it serves and authenticates clients.
	if _, err := ca.PeerCert("nodeagent", []string{NodeAgentServerName}, nil); err != nil {
		return err
	}
	if _, err := ca.ClientCert("nodeagent-client", "vireo-apiserver", nil); err != nil {
		return fmt.Errorf("node agent client certificate: %w", err)
	}
	return nil
}
