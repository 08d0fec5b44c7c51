// Package pki creates the certificate authority and the certificates a single-machine
// Vireo installation needs, and reuses them on later runs.
package pki

import (
	"bytes"
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

// LoadOrCreateCA reads the CA from dir, creating it on first use or anew when its files
// are unusable (not PEM, or a certificate that does not match the key).
func LoadOrCreateCA(dir, name, commonName string) (*CA, error) {
	ca := &CA{Dir: dir, Name: name}
	cert, key, err := load(dir, name)
	if err == nil && matches(cert, key) {
		ca.cert, ca.key = cert, key
		return ca, nil
	}
	if err != nil && !replaceable(err) {
		return nil, err
	}
	// Missing, unreadable as PEM, or a certificate that is not the key's (a write cut
	// short between the two files): a new CA, after which every certificate it issued
	// is reissued as well.
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
	existing, existingKey, err := load(ca.Dir, name)
	if err == nil && matches(existing, existingKey) && ca.stillValid(existing, tmpl) {
		return out, nil
	}
	if err != nil && !replaceable(err) {
		return out, err
	}
	// Missing, unparsable, not matching its key, issued for other names, by another CA or about to
	// expire: (re)issue.
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

// matches reports whether cert certifies key's public key.
func matches(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(key.Public())
}

// save writes the key and then the certificate, each atomically.
func save(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := writeFileAtomic(filepath.Join(dir, name+".key"), keyPEM, 0o600); err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return writeFileAtomic(filepath.Join(dir, name+".crt"), certPEM, 0o644)
}

// errUnusable marks a certificate or key file that exists but cannot be used; like a
// missing one, it is replaced.
var errUnusable = errors.New("unusable")

// replaceable reports whether a load error means "create the file anew" rather than a
// problem the user must fix (such as a permission error).
func replaceable(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, errUnusable)
}

func load(dir, name string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	if cb == nil {
		return nil, nil, fmt.Errorf("%s.crt in %s: not PEM: %w", name, dir, errUnusable)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s.crt in %s: %v: %w", name, dir, err, errUnusable)
	}
	key, err := loadKey(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// loadKey reads a PEM-encoded EC private key.
func loadKey(path string) (*ecdsa.PrivateKey, error) {
	keyPEM, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, fmt.Errorf("%s: not PEM: %w", path, errUnusable)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errUnusable)
	}
	return key, nil
}

// SigningKey creates (once) a bare key pair, <name>.key and <name>.pub, such as the
// key kube-apiserver signs service-account tokens with. A missing or stale <name>.pub
// is rewritten from the key.
func SigningKey(dir, name string) (Issued, error) {
	out := Issued{CertFile: filepath.Join(dir, name+".pub"), KeyFile: filepath.Join(dir, name+".key")}
	key, err := loadKey(out.KeyFile)
	if err != nil && replaceable(err) {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return out, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return out, err
		}
		if err := writeFileAtomic(out.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
			return out, err
		}
	} else if err != nil {
		return out, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return out, err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	if have, err := os.ReadFile(out.CertFile); err == nil && bytes.Equal(have, pubPEM) {
		return out, nil
	}
	return out, writeFileAtomic(out.CertFile, pubPEM, 0o644)
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
