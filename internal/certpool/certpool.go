// Package certpool reads the CA bundles Vireo's components verify each other with: a PEM file
// that must hold at least one certificate (an empty or mistyped file is an error, not a pool
// that trusts nothing and fails every handshake later).
package certpool

import (
	"crypto/x509"
	"fmt"
	"os"
)

// FromFile is a pool of the PEM certificates in file.
func FromFile(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
