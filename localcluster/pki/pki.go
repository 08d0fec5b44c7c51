// Package pki creates the certificate authority and the certificates a single-machine
// Vireo installation needs, and reuses them on later runs.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// validity of every certificate; a development installation is recreated long before.
const validity = 5 * 365 * 24 * time.Hour

// CA is a certificate authority whose files live in Dir as <Name>.crt and <Name>.key.
type CA struct {
	Dir, Name string
	cert      *x509.Certificate
	key       crypto.Signer
}

// CertFile is the path of the CA certificate (the bundle clients trust).
func (ca *CA) CertFile() string { return filepath.Join(ca.Dir, ca.Name+".crt") }

// PEM returns the CA certificate in PEM form.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// LoadOrCreateCA reads the CA from dir, creating it on first use.
func LoadOrCreateCA(dir, name, commonName string) (*CA, error) {
	ca := &CA{Dir: dir, Name: name}
	cert, key, err := load(dir, name)
	if err == nil {
		ca.cert, ca.key = cert, key
		return ca, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, ecKey.Public(), ecKey)
	if err != nil {
		return nil, err
	}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	ca.key = ecKey
	return ca, save(dir, name, der, ecKey)
}

// Issued is a certificate and key pair on disk.
type Issued struct{ CertFile, KeyFile string }

// ClientCert issues (once) a client certificate for user commonName in groups orgs.
func (ca *CA) ClientCert(name, commonName string, orgs []string) (Issued, error) {
	return ca.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// ServingCert issues (once) a TLS serving certificate for the given names and addresses.
func (ca *CA) ServingCert(name string, dnsNames []string, ips []net.IP) (Issued, error) {
	return ca.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

func (ca *CA) issue(name string, tmpl *x509.Certificate) (Issued, error) {
	out := Issued{CertFile: filepath.Join(ca.Dir, name+".crt"), KeyFile: filepath.Join(ca.Dir, name+".key")}
	existing, _, err := load(ca.Dir, name)
	if err == nil && ca.stillValid(existing, tmpl) {
		return out, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, err
	}
	// Missing, or issued for other names, by another CA or about to expire: (re)issue.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return out, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return out, fmt.Errorf("issuing certificate %q: %w", name, err)
	}
	return out, save(ca.Dir, name, der, key)
}

// stillValid reports whether an existing certificate was issued by this CA for the same
// subject, names, addresses and usages as tmpl, and stays valid for a while.
func (ca *CA) stillValid(cert *x509.Certificate, tmpl *x509.Certificate) bool {
	if cert.CheckSignatureFrom(ca.cert) != nil || time.Until(cert.NotAfter) < 30*24*time.Hour {
		return false
	}
	ipStrings := func(ips []net.IP) []string {
		out := make([]string, len(ips))
		for i, ip := range ips {
			out[i] = ip.String()
		}
		return out
	}
	return cert.Subject.CommonName == tmpl.Subject.CommonName &&
		slices.Equal(cert.Subject.Organization, tmpl.Subject.Organization) &&
		slices.Equal(cert.DNSNames, tmpl.DNSNames) &&
		slices.Equal(ipStrings(cert.IPAddresses), ipStrings(tmpl.IPAddresses)) &&
		slices.Equal(cert.ExtKeyUsage, tmpl.ExtKeyUsage)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return n
}

func save(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, name+".key"), keyPEM, 0o600); err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o644)
}

func load(dir, name string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s: not PEM; delete %s.crt and %s.key to recreate them", filepath.Join(dir, name), name, name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// SigningKey creates (once) a bare key pair, <name>.key and <name>.pub, such as the
// key kube-apiserver signs service-account tokens with.
func SigningKey(dir, name string) (Issued, error) {
	out := Issued{CertFile: filepath.Join(dir, name+".pub"), KeyFile: filepath.Join(dir, name+".key")}
	if _, err := os.Stat(out.KeyFile); err == nil {
		return out, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return out, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return out, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return out, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return out, err
	}
	if err := os.WriteFile(out.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return out, err
	}
	return out, os.WriteFile(out.CertFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

// PeerCert issues (once) a certificate valid for both serving and client use, as etcd
// peers need.
func (ca *CA) PeerCert(name string, dnsNames []string, ips []net.IP) (Issued, error) {
	return ca.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
}
