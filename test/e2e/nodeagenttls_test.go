package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/localcluster/pki"
)

// TestNodeAgentAcceptsOnlyVireoAPIServer: a node agent's HTTPS server answers vireo-apiserver's
// client certificate and refuses every other client at the TLS handshake: none, a Kubernetes
// user's, and one of Vireo's own CA made out to another name.
func TestNodeAgentAcceptsOnlyVireoAPIServer(t *testing.T) {
	t.Parallel()
	pods, err := kube.CoreV1().Pods("vireo-system").List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + cluster.NodeNames()[0]})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.PodIP == "" {
		t.Fatalf("the node agent Pod of %s: %v", cluster.NodeNames()[0], err)
	}
	url := "https://" + net.JoinHostPort(pods.Items[0].Status.PodIP, "8186") + "/healthz"
	certs := filepath.Dir(cluster.VireoCAFile())
	caPEM, err := os.ReadFile(cluster.VireoCAFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)

	// Another name from Vireo's own CA: the CA's key copied into a directory of the test's.
	strangerCA := t.TempDir()
	for _, f := range []string{"ca.crt", "ca.key"} {
		b, err := os.ReadFile(filepath.Join(certs, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(strangerCA, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca, err := pki.LoadOrCreateCA(strangerCA, "ca", "vireo-ca")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := ca.ClientCert("stranger", "vireo-controller", nil)
	if err != nil {
		t.Fatal(err)
	}
	user, err := cluster.UserConfig("nodeagent-stranger", nil)
	if err != nil {
		t.Fatal(err)
	}

	get := func(certFile, keyFile string) (int, error) {
		cfg := &tls.Config{RootCAs: roots, ServerName: localcluster.NodeAgentServerName, MinVersion: tls.VersionTLS13}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}).Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) != "ok" {
			t.Errorf("health check answered %q", body)
		}
		return resp.StatusCode, nil
	}
	if code, err := get(filepath.Join(certs, "nodeagent-client.crt"), filepath.Join(certs, "nodeagent-client.key")); err != nil || code != http.StatusOK {
		t.Fatalf("vireo-apiserver's certificate: HTTP %d, %v", code, err)
	}
	for name, pair := range map[string][2]string{
		"no client certificate":                {"", ""},
		"a Kubernetes user's certificate":      {user.CertFile, user.KeyFile},
		"Vireo's CA, made out to another name": {stranger.CertFile, stranger.KeyFile},
	} {
		if code, err := get(pair[0], pair[1]); err == nil {
			t.Errorf("%s: HTTP %d, want the handshake refused", name, code)
		} else if !strings.Contains(err.Error(), "tls") && !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: %v, want a TLS refusal", name, err)
		}
	}
}
