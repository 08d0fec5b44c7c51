package localcluster

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vireo-dev/vireo/localcluster/pki"
)

// vireoEtcdMembers is the size of the etcd cluster an HA installation stores Vireo's objects
// in, as artifacts/base's vireo-etcd StatefulSet: a quorum of two survives one member's loss.
const vireoEtcdMembers = 3

// DefaultVireoEtcdPort is the first vireo-etcd member's client port in an HA installation;
// member i listens for clients on DefaultVireoEtcdPort+2i and for peers on the port after.
const DefaultVireoEtcdPort = 22379

// VireoEtcdPort is the first vireo-etcd member's client port (see DefaultVireoEtcdPort).
func (p Ports) VireoEtcdPort() int {
	if p.VireoEtcd != 0 {
		return p.VireoEtcd
	}
	return DefaultVireoEtcdPort
}

// Names of the certificates of the host's vireo-etcd members, issued by artifacts/base's etcd
// CA (whose client certificate, in the Secret vireo-etcd-tls, vireo-apiserver presents) for
// the bridge's address: the Pods on the local nodes reach the members there.
const (
	vireoEtcdServerCert = "local-etcd-server"
	vireoEtcdPeerCert   = "local-etcd-peer"
)

// artifactCertsDir holds the certificates artifacts/base's secretGenerator reads (and the
// host vireo-etcd members' certificates, issued by the same etcd CA).
func (c *Cluster) artifactCertsDir() string { return filepath.Join(c.manifestsDir(), "base", "certs") }

// vireoEtcdURLs are the members' client and peer URLs, on the bridge's address.
func (c *Cluster) vireoEtcdURLs(i int) (client, peer string) {
	host, port := c.opts.Network.HostIP.String(), c.opts.Ports.VireoEtcdPort()+2*i
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port)), "https://" + net.JoinHostPort(host, strconv.Itoa(port+1))
}

// VireoEtcdEndpoints are the client URLs of an HA installation's vireo-etcd members
// (vireo-apiserver's --etcd-servers); none without HA.
func (c *Cluster) VireoEtcdEndpoints() []string {
	if !c.opts.HA {
		return nil
	}
	urls := make([]string, vireoEtcdMembers)
	for i := range urls {
		urls[i], _ = c.vireoEtcdURLs(i)
	}
	return urls
}

// vireoEtcd are the members of an HA installation's vireo-etcd, host processes like the
// cluster's own etcd but a separate store; none without HA.
func (c *Cluster) vireoEtcd() []Component {
	if !c.opts.HA {
		return nil
	}
	l, certs := &c.opts.Layout, c.abs(c.artifactCertsDir())
	file := func(name string) string { return filepath.Join(certs, name) }
	comps := make([]Component, vireoEtcdMembers)
	for i := range comps {
		client, peer := c.vireoEtcdURLs(i)
		comps[i] = Component{Name: vireoEtcdName(i), Path: c.abs(l.Bin("etcd")), Dir: l, Args: []string{
			"--name", vireoEtcdName(i),
			"--data-dir", c.abs(l.Data(vireoEtcdName(i))),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", c.vireoEtcdInitialCluster(),
			"--initial-cluster-token", vireoEtcdToken,
			"--cert-file", file(vireoEtcdServerCert + ".crt"), "--key-file", file(vireoEtcdServerCert + ".key"),
			"--trusted-ca-file", file("etcd-ca.crt"), "--client-cert-auth",
			"--peer-cert-file", file(vireoEtcdPeerCert + ".crt"), "--peer-key-file", file(vireoEtcdPeerCert + ".key"),
			"--peer-trusted-ca-file", file("etcd-ca.crt"), "--peer-client-cert-auth",
			"--log-level", "warn",
		}, Ready: httpsReady(client+"/health", file("etcd-ca.crt"), file("etcd-client"))}
	}
	return comps
}

func vireoEtcdName(i int) string { return "vireo-etcd-" + strconv.Itoa(i) }

// vireoEtcdToken is the vireo-etcd cluster's token (--initial-cluster-token).
const vireoEtcdToken = "vireo-etcd"

// vireoEtcdInitialCluster names every member with its peer URL (--initial-cluster).
func (c *Cluster) vireoEtcdInitialCluster() string {
	initial := make([]string, vireoEtcdMembers)
	for i := range initial {
		_, peer := c.vireoEtcdURLs(i)
		initial[i] = vireoEtcdName(i) + "=" + peer
	}
	return strings.Join(initial, ",")
}

// vireoEtcdCertificates writes artifacts/base's certificates (the ones the Secrets carry) and
// issues the host members' serving and peer certificates from the same etcd CA, for the
// bridge's address.
func (c *Cluster) vireoEtcdCertificates() error {
	dir := c.artifactCertsDir()
	if err := WriteArtifactCerts(dir); err != nil {
		return err
	}
	etcdCA, err := pki.LoadOrCreateCA(dir, "etcd-ca", "vireo-etcd-ca")
	if err != nil {
		return err
	}
	ips := []net.IP{c.opts.Network.HostIP}
	// etcd presents its serving certificate as a client too (to its own gRPC gateway), so it
	// is a peer certificate: both usages.
	if _, err := etcdCA.PeerCert(vireoEtcdServerCert, []string{"localhost"}, ips); err != nil {
		return err
	}
	_, err = etcdCA.PeerCert(vireoEtcdPeerCert, []string{"vireo-etcd"}, ips)
	return err
}

// startVireoEtcd starts every member before waiting for any: a member is healthy only once
// a quorum of them elected a leader.
func (c *Cluster) startVireoEtcd(ctx context.Context, started *[]Component) error {
	comps := c.vireoEtcd()
	if len(comps) == 0 {
		return nil
	}
	if err := c.vireoEtcdCertificates(); err != nil {
		return fmt.Errorf("vireo-etcd certificates in %s: %w", c.artifactCertsDir(), err)
	}
	for _, comp := range comps {
		if err := c.start(comp, started); err != nil {
			return err
		}
	}
	for _, comp := range comps {
		if err := c.waitReady(ctx, comp); err != nil {
			return err
		}
	}
	return nil
}
