package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"testing"
)

func TestIssuedCertificatesChainToTheCAAndAreReused(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingCert("server", []string{"svc.example"}, []net.IP{net.IPv4(10, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.ClientCert("user", "alice", []string{"team"})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM())

	leaf := loadLeaf(t, serving)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "svc.example", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("serving certificate does not verify for svc.example: %v", err)
	}
	if err := leaf.VerifyHostname("10.0.0.1"); err != nil {
		t.Errorf("serving certificate lacks its IP: %v", err)
	}
	cl := loadLeaf(t, client)
	if _, err := cl.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if cl.Subject.CommonName != "alice" || len(cl.Subject.Organization) != 1 || cl.Subject.Organization[0] != "team" {
		t.Errorf("client subject %v, want CN alice O team", cl.Subject)
	}

	// A second run reuses the files instead of issuing new ones.
	before, _ := os.ReadFile(client.CertFile)
	again, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.ClientCert("user", "alice", []string{"team"}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(client.CertFile)
	if string(before) != string(after) || string(again.PEM()) != string(ca.PEM()) {
		t.Errorf("certificates were reissued on a second run")
	}
}

func loadLeaf(t *testing.T, is Issued) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(is.CertFile, is.KeyFile)
	if err != nil {
		t.Fatalf("loading %s: %v", is.CertFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func TestCertificateIsReissuedWhenItsNamesChange(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	first, err := ca.ServingCert("server", []string{"old.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ServingCert("server", []string{"new.example"}, []net.IP{net.IPv4(10, 0, 0, 2)}); err != nil {
		t.Fatal(err)
	}
	leaf := loadLeaf(t, first)
	if err := leaf.VerifyHostname("new.example"); err != nil {
		t.Errorf("certificate not reissued for its new name: %v", err)
	}
	if err := leaf.VerifyHostname("10.0.0.2"); err != nil {
		t.Errorf("certificate not reissued for its new address: %v", err)
	}
}
