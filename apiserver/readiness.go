package apiserver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
)

// frontProxyAccepted keeps the server unready until its TLS layer asks clients for
// certificates of the front-proxy CA (read from kube-system/extension-apiserver-authentication).
// That CA arrives through an informer that syncs only after serving starts, and the
// serving certificate controller picks it up later still; until both happened every
// request the aggregator forwards is anonymous, and users see 403s after each restart.
// The check looks at what a client is actually asked for, in a handshake with itself.
func frontProxyAccepted(ca dynamiccertificates.CAContentProvider, addr string) healthz.HealthChecker {
	var seen atomic.Bool
	return healthz.NamedCheck("front-proxy-client-ca", func(*http.Request) error {
		if seen.Load() {
			return nil
		}
		subjects, err := caSubjects(ca.CurrentCABundleContent())
		if err != nil {
			return fmt.Errorf("front-proxy client CA %s: %w", ca.Name(), err)
		}
		asked, err := acceptableCAs(addr)
		if err != nil {
			return err
		}
		for _, s := range subjects {
			for _, a := range asked {
				if bytes.Equal(s, a) {
					seen.Store(true)
					return nil
				}
			}
		}
		return fmt.Errorf("TLS does not ask for front-proxy client certificates (%s) yet", ca.Name())
	})
}

// caSubjects returns the raw subjects of the certificates of a PEM bundle.
func caSubjects(bundle []byte) ([][]byte, error) {
	var out [][]byte
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, cert.RawSubject)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("not loaded yet")
	}
	return out, nil
}

// acceptableCAs handshakes with the server at addr and returns the CA names it asks
// client certificates from. No certificate is sent and nothing is requested.
func acceptableCAs(addr string) ([][]byte, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	var asked [][]byte
	cfg := &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // only the server's certificate request is read
		GetClientCertificate: func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked = cri.AcceptableCAs
			return &tls.Certificate{}, nil
		},
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort(host, port), cfg)
	if err != nil {
		return nil, fmt.Errorf("handshake with own secure port: %w", err)
	}
	conn.Close()
	return asked, nil
}
