package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// agnhost is the image of the tests' web servers and clients: the project's agnhost image (the
// part of Kubernetes' e2e test image the tests use) in the installation's registry. Set by
// TestMain.
var agnhost string

// webPod is an agnhost netexec Pod serving HTTP on port 8080, pinned to a node.
func webPod(ns, name, node string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, labels: {app: web}}
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 5
  containers:
  - name: web
    image: %s
    args: [netexec, --http-port=8080]
    env: [{name: MY_POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]
`, name, ns, node, agnhost)
}

func waitPodsReady(t *testing.T, ns string, names ...string) map[string]*corev1.Pod {
	t.Helper()
	args := []string{"-n", ns, "wait", "--for=condition=Ready", "--timeout=60s"}
	for _, n := range names {
		args = append(args, "pod/"+n)
	}
	kubectl(t, args...)
	pods := map[string]*corev1.Pod{}
	for _, n := range names {
		p, err := kube.CoreV1().Pods(ns).Get(t.Context(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods[n] = p
	}
	return pods
}

func TestNodesAreReadyWithTheirOwnAddresses(t *testing.T) {
	t.Parallel()
	nodes, err := kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(cluster.NodeNames()) || len(nodes.Items) < 2 {
		t.Fatalf("nodes: %d, want %d (e2e runs two)", len(nodes.Items), len(cluster.NodeNames()))
	}
	seenIP, seenCIDR := map[string]bool{}, map[string]bool{}
	for _, n := range nodes.Items {
		ip := ""
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		if ip == "" || seenIP[ip] || n.Spec.PodCIDR == "" || seenCIDR[n.Spec.PodCIDR] {
			t.Errorf("node %s: InternalIP %q, podCIDR %q: want distinct ones", n.Name, ip, n.Spec.PodCIDR)
		}
		seenIP[ip], seenCIDR[n.Spec.PodCIDR] = true, true
		if n.Labels[corev1.LabelHostname] != n.Name {
			t.Errorf("node %s: hostname label %q", n.Name, n.Labels[corev1.LabelHostname])
		}
		if n.Status.Allocatable.Cpu().IsZero() || n.Status.Allocatable.Memory().IsZero() {
			t.Errorf("node %s: allocatable %v", n.Name, n.Status.Allocatable)
		}
		if _, err := kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(t.Context(), n.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("node %s has no Lease: %v", n.Name, err)
		}
	}
	out := kubectl(t, "get", "nodes")
	if strings.Count(out, " Ready ") != len(nodes.Items) {
		t.Errorf("kubectl get nodes:\n%s", out)
	}
}

// TestPodNetworking: Pods on two nodes reach each other's IPs and a ClusterIP Service in
// front of them, two Pods on one node serve the same port, and the host reaches every Pod.
func TestPodNetworking(t *testing.T) {
	t.Parallel()
	ns, nodes := namespace(t), cluster.NodeNames()
	manifest := webPod(ns, "a0", nodes[0]) + "---\n" + webPod(ns, "b0", nodes[0]) + "---\n" + webPod(ns, "a1", nodes[1]) + fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %s}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`, ns)
	kubectl(t, "apply", "-f", manifestFile(t, manifest))
	pods := waitPodsReady(t, ns, "a0", "b0", "a1")
	for name, p := range pods {
		if p.Status.PodIP == "" || p.Status.PodIP == p.Status.HostIP {
			t.Fatalf("pod %s: podIP %q hostIP %q", name, p.Status.PodIP, p.Status.HostIP)
		}
		// From the host: the Pod answers with its own name (its UTS namespace) on the shared port.
		body := httpGet(t, "http://"+p.Status.PodIP+":8080/hostname")
		if body != name {
			t.Errorf("GET %s:8080/hostname = %q, want %q", p.Status.PodIP, body, name)
		}
	}
	// Pod to Pod across nodes, both ways, and to the Service's ClusterIP.
	svc, err := kube.CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{"a0": pods["a1"].Status.PodIP + ":8080", "a1": pods["b0"].Status.PodIP + ":8080"} {
		kubectl(t, "-n", ns, "exec", from, "--", "/agnhost", "connect", to, "--timeout=5s")
	}
	eventually(t, "a1 reaches the Service's ClusterIP", func() error {
		_, errOut, err := kubectlResult("-n", ns, "exec", "a1", "--", "/agnhost", "connect", svc.Spec.ClusterIP+":80", "--timeout=2s")
		if err != nil {
			return fmt.Errorf("%v: %s", err, errOut)
		}
		return nil
	})
	// In-cluster clients find kube-apiserver through the kubernetes Service.
	env := kubectl(t, "-n", ns, "exec", "a0", "--", "sh", "-c", `echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT $MY_POD_IP`)
	if want := "10.96.0.1:443 " + pods["a0"].Status.PodIP; strings.TrimSpace(env) != want {
		t.Errorf("container env = %q, want %q", env, want)
	}
	kubectl(t, "-n", ns, "exec", "a0", "--", "/agnhost", "connect", "10.96.0.1:443", "--timeout=5s")
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	var body string
	eventually(t, "GET "+url, func() error {
		resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err
	})
	return body
}

// TestLogsExecAndRestarts: kubectl logs (-f, --previous), exec with its exit code, and a
// crashing container restarted with its restart count and last state.
func TestLogsExecAndRestarts(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: %s
    args: [connect, "127.0.0.1:1", --timeout=1s]
`, ns, agnhost)
	kubectl(t, "apply", "-f", manifestFile(t, webPod(ns, "web", cluster.NodeNames()[0])+"---\n"+manifest))
	waitPodsReady(t, ns, "web")
	httpGet(t, "http://"+podIP(t, ns, "web")+":8080/echo?msg=hello-log")
	if out := kubectl(t, "-n", ns, "logs", "web"); !strings.Contains(out, "GET /echo?msg=hello-log") {
		t.Errorf("kubectl logs web lacks the request netexec logged:\n%s", out)
	}
	out, errOut, err := kubectlResult("-n", ns, "exec", "web", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	var exitErr *exec.ExitError
	if !asExitError(err, &exitErr) || exitErr.ExitCode() != 3 || out != "out\n" || !strings.Contains(errOut, "err") {
		t.Errorf("exec exit 3: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	// A container runs as its image's user: the agnhost image's nonroot.
	if out := kubectl(t, "-n", ns, "exec", "web", "--", "id", "-u"); strings.TrimSpace(out) != "65532" {
		t.Errorf("exec id -u = %q", out)
	}

	// The crashing container: restarted, with its previous run's log and exit code.
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err = kube.CoreV1().Pods(ns).Get(ctx, "crash", metav1.GetOptions{})
		if err != nil || len(pod.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		cs := pod.Status.ContainerStatuses[0]
		return cs.RestartCount >= 1 && cs.LastTerminationState.Terminated != nil, nil
	})
	if err != nil {
		t.Fatalf("crashing container not restarted: %v", pod.Status)
	}
	if last := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated; last.ExitCode != 1 || last.Reason != "Error" {
		t.Errorf("last state %+v, want exit code 1, reason Error", last)
	}
	// The kubelet keeps one dead container per container: while the current run has
	// exited too and is not yet collected, the one LastTerminationState names may be
	// gone and the kubelet answers "unable to retrieve container logs"; ask again.
	var previous string
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		previous, _, _ = kubectlResult("-n", ns, "logs", "crash", "--previous")
		return strings.Contains(previous, "127.0.0.1:1"), nil
	})
	if err != nil {
		t.Errorf("kubectl logs --previous = %q, want the connect error", previous)
	}
	// logs -f ends when the followed run exits.
	cmd := exec.CommandContext(t.Context(), filepath.Join(cluster.Options().BinDir, "kubectl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "logs", "-f", "web", "--tail=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "delete", "pod", "web", "--wait=false")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("kubectl logs -f did not end when the container stopped")
	}
}

func asExitError(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

func podIP(t *testing.T, ns, name string) string {
	t.Helper()
	p, err := kube.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.PodIP
}

func TestPodWithAnUnknownImageFailsWithItsReason(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	// An image the installation's registry does not have (a pull from outside would leave
	// this machine).
	image, why := cluster.RegistryAddress()+"/vireo/no-such-image:1.0", "not found"
	kubectl(t, "-n", ns, "run", "nginx", "--image="+image)
	var msg string
	eventually(t, "ErrImagePull on the unknown image", func() error {
		p, err := kube.CoreV1().Pods(ns).Get(t.Context(), "nginx", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
				msg = w.Message
				return nil
			}
		}
		return fmt.Errorf("container statuses %+v", p.Status.ContainerStatuses)
	})
	if !strings.Contains(msg, image) || !strings.Contains(msg, why) {
		t.Errorf("message %q should name the image and say why", msg)
	}
}

// TestNodeAPIIsSecured: the node API refuses anonymous and ordinary users; a node cannot
// change another node's Pods (NodeRestriction).
func TestNodeAPIIsSecured(t *testing.T) {
	t.Parallel()
	addr := cluster.Options().Network.NodeAddress(0).String()
	pem, err := os.ReadFile(filepath.Join(cluster.Options().PKI(), "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	get := func(cert *tls.Certificate) int {
		cfg := &tls.Config{RootCAs: pool, ServerName: cluster.NodeNames()[0]}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}).Get("https://" + addr + ":10250/pods")
		if err != nil {
			t.Fatalf("node API: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(nil); code != http.StatusUnauthorized {
		t.Errorf("anonymous request to the node API: HTTP %d, want 401", code)
	}
	userCfg, err := cluster.UserConfig("node-api-stranger", nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(userCfg.CertFile, userCfg.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if code := get(&pair); code != http.StatusForbidden {
		t.Errorf("ordinary user on the node API: HTTP %d, want 403", code)
	}

	ns, nodes := namespace(t), cluster.NodeNames()
	kubectl(t, "apply", "-f", manifestFile(t, webPod(ns, "other", nodes[1])))
	waitPodsReady(t, ns, "other")
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(cluster.Options().Root, "kubeconfigs", nodes[0]+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	node0, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := kube.CoreV1().Pods(ns).Get(t.Context(), "other", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Message = "written by the wrong node"
	if _, err := node0.CoreV1().Pods(ns).UpdateStatus(t.Context(), pod, metav1.UpdateOptions{}); err == nil {
		t.Errorf("node %s updated the status of a Pod on node %s", nodes[0], nodes[1])
	}
	if err := node0.CoreV1().Pods(ns).Delete(t.Context(), "other", metav1.DeleteOptions{}); err == nil {
		t.Errorf("node %s deleted a Pod on node %s", nodes[0], nodes[1])
	}
}

// TestNodeRestartAdoptsItsPods: a restarted node keeps the containers it was running (same
// process, no restart) instead of starting second copies.
func TestNodeRestartAdoptsItsPods(t *testing.T) {
	ns, node := namespace(t), cluster.NodeNames()[1]
	kubectl(t, "apply", "-f", manifestFile(t, webPod(ns, "kept", node)))
	before := waitPodsReady(t, ns, "kept")["kept"]
	if err := cluster.Restart(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	// The restarted node reports the Pod again; it must be the same run.
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && nodeIsReady(n), nil
	})
	if err != nil {
		t.Fatalf("node %s not Ready after restart", node)
	}
	after := waitPodsReady(t, ns, "kept")["kept"]
	b, a := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
	if a.ContainerID != b.ContainerID || a.RestartCount != b.RestartCount || !a.State.Running.StartedAt.Equal(&b.State.Running.StartedAt) {
		t.Errorf("container after node restart %+v, before %+v: want the same run", a, b)
	}
	if got := httpGet(t, "http://"+after.Status.PodIP+":8080/hostname"); got != "kept" {
		t.Errorf("adopted Pod answers %q", got)
	}
	if n := podProcesses(t, "kept"); n != 1 {
		t.Errorf("%d processes for the Pod's one container, want 1", n)
	}
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podProcesses counts the processes of a Pod's containers: those with the Pod's name as
// HOSTNAME, which every container gets.
func podProcesses(t *testing.T, pod string) int { return len(podProcessIDs(t, pod)) }

// countProcesses counts the processes for which match, given the command line (words
// separated by spaces) and the environment (NUL-separated), is true.
func countProcesses(t *testing.T, match func(cmdline, environ string) bool) int {
	return len(processes(t, match))
}

// processes lists the ids of the processes for which match is true.
func processes(t *testing.T, match func(cmdline, environ string) bool) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if match(strings.ReplaceAll(string(b), "\x00", " "), string(env)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// podProcessIDs lists the processes of a Pod's containers (see podProcesses).
func podProcessIDs(t *testing.T, pod string) []int {
	return processes(t, func(_, environ string) bool {
		return strings.Contains(environ, "\x00HOSTNAME="+pod+"\x00") || strings.HasPrefix(environ, "HOSTNAME="+pod+"\x00")
	})
}
