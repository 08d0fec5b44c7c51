package localcluster

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

// TestArtifactCertsGiveEtcdItsOwnCA: etcd's server, peer and client certificates chain to etcd's
// own CA, and the node agents' certificate (which every node holds) does not, so etcd, trusting
// only its CA, refuses it; the other certificates chain to the main CA.
func TestArtifactCertsGiveEtcdItsOwnCA(t *testing.T) {
	dir := t.TempDir()
	if err := WriteArtifactCerts(dir); err != nil {
		t.Fatal(err)
	}
	pool := func(name string) *x509.CertPool {
		p := x509.NewCertPool()
		p.AddCert(readCert(t, filepath.Join(dir, name+".crt")))
		return p
	}
	etcdCA, mainCA := pool("etcd-ca"), pool("ca")
	verify := func(name string, roots *x509.CertPool, usage x509.ExtKeyUsage) error {
		_, err := readCert(t, filepath.Join(dir, name+".crt")).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for name, usage := range map[string]x509.ExtKeyUsage{"etcd-server": x509.ExtKeyUsageServerAuth, "etcd-peer": x509.ExtKeyUsageClientAuth, "etcd-client": x509.ExtKeyUsageClientAuth} {
		if err := verify(name, etcdCA, usage); err != nil {
			t.Errorf("%s does not chain to etcd's CA: %v", name, err)
		}
	}
	for _, name := range []string{"nodeagent", "nodeagent-client", "apiserver"} {
		if err := verify(name, etcdCA, x509.ExtKeyUsageAny); err == nil {
			t.Errorf("%s chains to etcd's CA: etcd would accept it", name)
		}
		if err := verify(name, mainCA, x509.ExtKeyUsageAny); err != nil {
			t.Errorf("%s does not chain to the main CA: %v", name, err)
		}
	}
}

func readCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM block", file)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
