package nodeagent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vireo-dev/vireo/localcluster/pki"
)

// TestServerAcceptsOnlyVireoAPIServer: the node agent's HTTPS server answers vireo-apiserver's
// client certificate, and refuses no certificate, another CA's, and another name from its CA.
func TestServerAcceptsOnlyVireoAPIServer(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.LoadOrCreateCA(filepath.Join(dir, "other"), "ca", "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ServingCert("nodeagent", []string{"vireo-nodeagent.vireo-system.svc"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ca       *pki.CA
		name, cn string
	}{{ca, "apiserver", "vireo-apiserver"}, {ca, "alice", "alice"}, {other, "impostor", "vireo-apiserver"}} {
		if _, err := c.ca.ClientCert(c.name, c.cn, nil); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv, err := newServer(&Options{Listen: addr, TLSCertFile: filepath.Join(dir, "nodeagent.crt"), TLSKeyFile: filepath.Join(dir, "nodeagent.key"),
		ClientCAFile: ca.CertFile(), ClientName: "vireo-apiserver"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	get := func(certDir, name string) (string, error) {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.PEM())
		cfg := &tls.Config{RootCAs: roots, ServerName: "vireo-nodeagent.vireo-system.svc"}
		if name != "" {
			cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, name+".crt"), filepath.Join(certDir, name+".key"))
			if err != nil {
				return "", err
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
		resp, err := client.Get("https://" + addr + "/healthz")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body), nil
	}
	var got string
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got, err = get(dir, "apiserver")
		return err == nil, nil
	}); err != nil || got != "200 ok" {
		t.Fatalf("vireo-apiserver's certificate: %q, %v", got, err)
	}
	for _, c := range []struct{ dir, name string }{{dir, ""}, {dir, "alice"}, {filepath.Join(dir, "other"), "impostor"}} {
		if got, err := get(c.dir, c.name); err == nil {
			t.Errorf("client %q was served: %s", c.name, got)
		}
	}
}
