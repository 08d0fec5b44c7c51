package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestMetrics: vireo-controller and vireo-apiserver serve /metrics over HTTPS to a caller that
// kube-apiserver authenticates (a ServiceAccount token) and authorizes (vireo:metrics-reader):
// 403 without a token or without the role. The controller's metrics have the workqueue of
// each reconcile loop, KubeVirt's phase-transition histogram and the VM and VMI counts. The
// test's VMI cannot be scheduled and its VM is halted: nothing boots.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	vmi := vmiNamed("nowhere")
	vmi.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"}
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(t.Context(), vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyExample(t, ns, "vm-demo.yaml", func(m string) string { return strings.Replace(m, "runStrategy: Always", "runStrategy: Halted", 1) })
	waitVMI(t, ns, "nowhere", 60*time.Second, "phase Scheduling", func(v *v1.VirtualMachineInstance) bool { return v.Status.Phase == v1.Scheduling })

	scraper, nobody := serviceAccountToken(t, ns, "scraper"), serviceAccountToken(t, ns, "nobody")
	bindMetricsReader(t, ns, "scraper")

	controller := "https://" + net.JoinHostPort(controllerLeader(t).Status.PodIP, "8443") + "/metrics"
	apiserver := "https://" + vireoAPIServerAddress(t) + "/metrics"
	// A caller without a token is system:anonymous, whom RBAC refuses.
	for _, url := range []string{controller, apiserver} {
		if code, _ := scrape(t, url, ""); code != http.StatusForbidden {
			t.Errorf("GET %s without a token: %d, want 403", url, code)
		}
	}
	for _, url := range []string{controller, apiserver} {
		eventually(t, "403 for a ServiceAccount without vireo:metrics-reader", func() error {
			if code, _ := scrape(t, url, nobody); code != http.StatusForbidden {
				return fmt.Errorf("GET %s as nobody: %d, want 403", url, code)
			}
			return nil
		})
	}
	want := []string{
		`workqueue_adds_total{name="vmi"}`,
		`workqueue_depth{name="vm"}`,
		`kubevirt_vmi_phase_transition_time_from_creation_seconds_count{phase="Scheduling"}`,
		`kubevirt_vm_info{name="demo",namespace="` + ns + `",status="stopped",status_group="non_running"} 1`,
		`kubevirt_number_of_vms{namespace="` + ns + `"} 1`,
		`kubevirt_vm_status_count{namespace="` + ns + `",status="stopped",status_group="non_running"} 1`,
		`kubevirt_vmi_phase_count{node="",phase="scheduling"}`,
	}
	eventually(t, "the controller's metrics", func() error {
		code, body := scrape(t, controller, scraper)
		if code != http.StatusOK {
			return fmt.Errorf("GET %s as the scraper: %d %.300s", controller, code, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return fmt.Errorf("no %s in the controller's metrics", w)
			}
		}
		return nil
	})
	if code, body := scrape(t, apiserver, scraper); code != http.StatusOK || !strings.Contains(body, "apiserver_request_total") {
		t.Errorf("GET %s as the scraper: %d %.300s", apiserver, code, body)
	}
}

// bindMetricsReader binds ServiceAccount ns/name to vireo:metrics-reader until the test ends.
func bindMetricsReader(t *testing.T, ns, name string) {
	t.Helper()
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + ns + "-" + name + "-metrics"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "vireo:metrics-reader", APIGroup: rbacv1.GroupName},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
}

// serviceAccountToken creates ServiceAccount ns/name and returns a token of it.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// scrape GETs url with the bearer token (none when empty); the servers' certificates are
// self-signed or from vireo-local's CA, and only who asks is tested here.
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestVersionAndHealthz: KubeVirt's GET /apis/subresources.kubevirt.io/v1/version and /healthz,
// through kube-apiserver, for any authenticated user; `vireoctl version` prints both versions.
func TestVersionAndHealthz(t *testing.T) {
	t.Parallel()
	anyone := userClient(t, "someone-without-bindings").KubevirtV1().RESTClient()
	var info struct{ GitVersion, GitCommit, GoVersion, Platform string }
	raw, err := anyone.Get().AbsPath("/apis/subresources.kubevirt.io/v1/version").DoRaw(t.Context())
	if err != nil || json.Unmarshal(raw, &info) != nil || !strings.HasPrefix(info.GitVersion, "v0.0.0-") || len(info.GitCommit) != 40 ||
		!strings.HasPrefix(info.GoVersion, "go") || info.Platform == "" {
		t.Errorf("version: %s (%v), want KubeVirt's shape with this build's commit", raw, err)
	}
	var health struct {
		APIServer struct {
			Connectivity string
			Version      struct{ GitVersion string }
		}
	}
	raw, err = anyone.Get().AbsPath("/apis/subresources.kubevirt.io/v1/healthz").DoRaw(t.Context())
	if err != nil || json.Unmarshal(raw, &health) != nil || health.APIServer.Connectivity != "ok" || !strings.HasPrefix(health.APIServer.Version.GitVersion, "v1.") {
		t.Errorf("healthz: %s (%v), want connectivity ok and kube-apiserver's version", raw, err)
	}
	out := kubectlVireo(t, "version")
	if !strings.Contains(out, "Client Version: version.Info{GitVersion:") || !strings.Contains(out, `Server Version: version.Info{GitVersion:"`+info.GitVersion+`"`) {
		t.Errorf("kubectl vireo version:\n%s", out)
	}
}
