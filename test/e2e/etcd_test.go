package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vireo-dev/vireo/localcluster/pki"
)

// Files of vireo-local's etcd PKI (localcluster/certs.go).
const (
	etcdCAFile         = "etcd-ca.crt"
	apiServerEtcdCert  = "apiserver-etcd-client"
	etcdRequestTimeout = 5 * time.Second
)

// etcdIssued are the certificates of etcd's own CA; every other certificate of the
// installation must be refused by etcd.
var etcdIssued = map[string]bool{"etcd-ca": true, "etcd-server": true, "etcd-peer": true, apiServerEtcdCert: true}

// TestEtcdOpensOnlyToKubeAPIServer dials vireo-local's etcd with every client
// certificate of the installation: kube-apiserver's etcd client certificate reads the
// cluster's data; the admin's (Kubernetes CA, system:masters), the controllers', the
// front-proxy's and a freshly issued user's are refused during the TLS handshake.
func TestEtcdOpensOnlyToKubeAPIServer(t *testing.T) {
	dir, ports := cluster.Options().PKI(), cluster.Options().Ports
	addr := fmt.Sprintf("127.0.0.1:%d", ports.EtcdClient)
	peerAddr := fmt.Sprintf("127.0.0.1:%d", ports.EtcdPeer)

	resp, err := etcdGet(addr, dir, apiServerEtcdCert, "/registry/namespaces/default")
	if err != nil {
		t.Fatalf("etcd request with kube-apiserver's etcd client certificate: %v", err)
	}
	if resp.Count != 1 {
		t.Fatalf("etcd request with kube-apiserver's etcd client certificate: found %d default namespaces, want 1", resp.Count)
	}

	if _, err := etcdGet(addr, dir, "admin", "/registry/namespaces/default"); err == nil {
		t.Fatalf("etcd answered a request made with the admin certificate of the Kubernetes CA")
	}
	if _, err := cluster.UserConfig("etcd-intruder", []string{"system:masters"}); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range clientCertificates(t, dir) {
		if etcdIssued[name] {
			continue
		}
		checked++
		for _, a := range []string{addr, peerAddr} {
			err := tlsProbe(a, dir, name)
			if err == nil {
				t.Errorf("etcd at %s accepted the TLS handshake with %s.crt (not issued by etcd's CA)", a, name)
			} else if !strings.Contains(err.Error(), "remote error: tls:") {
				t.Errorf("etcd at %s, %s.crt: %v, want etcd to refuse the certificate with a TLS alert", a, name, err)
			}
		}
	}
	if checked < 6 {
		t.Errorf("only %d certificates of other CAs found in %s", checked, dir)
	}
}

// clientCertificates lists the base names of the certificates in dir that have a key.
func clientCertificates(t *testing.T, dir string) []string {
	t.Helper()
	crts, err := filepath.Glob(filepath.Join(dir, "*.crt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, crt := range crts {
		name := strings.TrimSuffix(filepath.Base(crt), ".crt")
		if _, err := os.Stat(filepath.Join(dir, name+".key")); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// etcdTLS is a client configuration trusting etcd's CA and presenting <cert>.crt.
func etcdTLS(dir, cert string) (*tls.Config, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, etcdCAFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, cert+".crt"), filepath.Join(dir, cert+".key"))
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// etcdGet reads key with etcd's own client, authenticated by <cert>.crt.
func etcdGet(addr, dir, cert, key string) (*clientv3.GetResponse, error) {
	cfg, err := etcdTLS(dir, cert)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"https://" + addr}, TLS: cfg, DialTimeout: etcdRequestTimeout})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), etcdRequestTimeout)
	defer cancel()
	return cli.Get(ctx, key, clientv3.WithCountOnly())
}

// tlsProbe completes a TLS handshake presenting <cert>.crt and waits for the server's
// verdict: with TLS 1.3 a refused client certificate arrives as an alert on the first
// read (within milliseconds), while an accepted client hears nothing until it speaks, so
// the read times out. The timeout is long so that a slow alert on busy cores is never
// taken for acceptance; only a wrongly accepted certificate waits it out.
func tlsProbe(addr, dir, cert string) error {
	cfg, err := etcdTLS(dir, cert)
	if err != nil {
		return err
	}
	dialer := &net.Dialer{Timeout: etcdRequestTimeout}
	conn, err := tls.DialWithDialer(dialer, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil
	}
	return err
}

// writeOldEtcdPKI turns dir back into the layout of installations made before etcd had
// a CA of its own: etcd's certificates issued by the Kubernetes CA, no etcd CA.
func writeOldEtcdPKI(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"etcd-ca", "etcd-server", "etcd-peer", apiServerEtcdCert} {
		for _, ext := range []string{".crt", ".key"} {
			if err := os.Remove(filepath.Join(dir, name+ext)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-local-ca")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.PeerCert("etcd", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ClientCert("etcd-client", "kube-apiserver-etcd-client", nil); err != nil {
		t.Fatal(err)
	}
}
