package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/localcluster/pki"
)

// userClient returns a Vireo clientset for a user authenticated by client certificate.
func userClient(t *testing.T, user string) versioned.Interface {
	t.Helper()
	cfg, err := cluster.UserConfig(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bind(t *testing.T, ns, user, clusterRole string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + clusterRole, Namespace: ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user, APIGroup: rbacv1.GroupName}},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: clusterRole, APIGroup: rbacv1.GroupName},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(context.Background(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eventually retries fn until it returns nil: RBAC changes reach the authorizers'
// caches after a short delay.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	eventuallyWithin(t, what, 30*time.Second, fn)
}

// eventuallyWithin polls fn until it returns nil, failing the test after timeout.
func eventuallyWithin(t *testing.T, what string, timeout time.Duration, fn func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

func TestRBACThroughAggregation(t *testing.T) {
	t.Parallel()
	ctx, ns := context.Background(), namespace(t)
	kubectl(t, "-n", ns, "create", "-f", repo+"/artifacts/examples/vmi-demo.yaml")
	bind(t, ns, "viewer", "view")
	bind(t, ns, "editor", "edit")

	viewer := userClient(t, "viewer").KubevirtV1().VirtualMachineInstances(ns)
	eventually(t, "viewer gets a VMI", func() error {
		_, err := viewer.Get(ctx, "testvmi", metav1.GetOptions{})
		return err
	})
	if _, err := viewer.Create(ctx, vmiNamed("by-viewer"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("viewer creating a VMI: got %v, want Forbidden", err)
	}

	editor := userClient(t, "editor").KubevirtV1().VirtualMachineInstances(ns)
	eventually(t, "editor creates a VMI", func() error {
		_, err := editor.Create(ctx, vmiNamed("by-editor"), metav1.CreateOptions{})
		return err
	})
	if err := editor.Delete(ctx, "by-editor", metav1.DeleteOptions{}); err != nil {
		t.Errorf("editor deleting a VMI: %v", err)
	}

	nobody := userClient(t, "nobody").KubevirtV1().VirtualMachineInstances(ns)
	if _, err := nobody.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("unbound user listing VMIs: got %v, want Forbidden", err)
	}

	anon := rest.AnonymousClientConfig(admin)
	anonClient, err := versioned.NewForConfig(anon)
	if err != nil {
		t.Fatal(err)
	}
	_, err = anonClient.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) && !apierrors.IsForbidden(err) {
		t.Errorf("anonymous list: got %v, want 401 or 403", err)
	}
}

// TestDirectRequestsMustComeFromTheFrontProxy sends requests straight to vireo-apiserver,
// bypassing kube-apiserver, claiming to be an administrator.
func TestDirectRequestsMustComeFromTheFrontProxy(t *testing.T) {
	t.Parallel()
	pkiDir := cluster.Options().PKI()
	fp, err := pki.LoadOrCreateCA(pkiDir, "front-proxy-ca", "vireo-local-front-proxy-ca")
	if err != nil {
		t.Fatal(err)
	}
	intruder, err := fp.ClientCert("intruder", "not-the-front-proxy", nil)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + vireoAPIServerAddress(t) + "/apis/kubevirt.io/v1/virtualmachineinstances"
	cases := []struct {
		name     string
		certFile string
		wantOK   bool
	}{
		{"forged headers without a client certificate", "", false},
		{"front-proxy CA certificate with a CN not in requestheader-allowed-names", intruder.CertFile, false},
		{"the real front-proxy client certificate", pkiDir + "/front-proxy-client.crt", true},
	}
	for _, c := range cases {
		status := directRequest(t, url, c.certFile)
		if ok := status == http.StatusOK; ok != c.wantOK {
			t.Errorf("%s: HTTP %d", c.name, status)
		}
		if !c.wantOK && status != http.StatusUnauthorized && status != http.StatusForbidden {
			t.Errorf("%s: HTTP %d, want 401 or 403", c.name, status)
		}
	}
}

func directRequest(t *testing.T, url, certFile string) int {
	t.Helper()
	caPEM, err := os.ReadFile(cluster.VireoCAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	// The name the aggregator verifies: the Service's.
	cfg := &tls.Config{RootCAs: pool, ServerName: "vireo-apiserver.vireo-system.svc"}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, certFile[:len(certFile)-len(".crt")]+".key")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Remote-User", "kubernetes-admin")
	req.Header.Set("X-Remote-Group", "system:masters")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestNodeAgentPermissions: the node agent's ServiceAccount may do what its code does (read
// VMIs and Pods, write VMI status) and nothing else of what KubeVirt's virt-handler may: no
// Node, no migration, no event, no VMI spec or Secret.
func TestNodeAgentPermissions(t *testing.T) {
	t.Parallel()
	agent := "system:serviceaccount:vireo-system:vireo-nodeagent"
	for _, c := range []struct {
		verb, resource string
		want           bool
	}{
		{"list", "virtualmachineinstances.kubevirt.io", true},
		{"watch", "virtualmachineinstances.kubevirt.io", true},
		{"update", "virtualmachineinstances.kubevirt.io/status", true},
		{"watch", "pods", true},
		{"update", "virtualmachineinstances.kubevirt.io", false},
		{"patch", "virtualmachineinstances.kubevirt.io", false},
		{"patch", "nodes", false},
		{"get", "nodes", false},
		{"update", "virtualmachineinstancemigrations.kubevirt.io/status", false},
		{"create", "events", false},
		{"get", "secrets", false},
		{"create", "pods", false},
	} {
		args := []string{"auth", "can-i", c.verb, c.resource, "--all-namespaces", "--as", agent}
		if resource, sub, ok := strings.Cut(c.resource, "/"); ok {
			args = []string{"auth", "can-i", c.verb, resource, "--subresource", sub, "--all-namespaces", "--as", agent}
		}
		out, _, _ := kubectlResult(args...)
		if got := strings.TrimSpace(out) == "yes"; got != c.want {
			t.Errorf("the node agent may %s %s: %t, want %t", c.verb, c.resource, got, c.want)
		}
	}
}
