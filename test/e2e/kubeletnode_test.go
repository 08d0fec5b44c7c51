package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestNodesAreKubeletsWithContainerd: every node reports the upstream kubelet and containerd 2.
func TestNodesAreKubeletsWithContainerd(t *testing.T) {
	t.Parallel()
	nodes, err := kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(cluster.NodeNames()) {
		t.Fatalf("%d nodes, want %d", len(nodes.Items), len(cluster.NodeNames()))
	}
	for _, n := range nodes.Items {
		info := n.Status.NodeInfo
		if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://2.") || !strings.HasPrefix(info.KubeletVersion, "v1.37.") {
			t.Errorf("node %s: runtime %q, kubelet %q; want containerd://2.x and v1.37.x", n.Name, info.ContainerRuntimeVersion, info.KubeletVersion)
		}
		// The nodes offer the machine's CPUs once between them, each its share.
		if cpu := n.Status.Allocatable.Cpu().MilliValue(); cpu*int64(len(nodes.Items)) > int64(runtime.NumCPU())*1000 {
			t.Errorf("node %s: %dm CPUs allocatable, more than its share of the machine's %d", n.Name, cpu, runtime.NumCPU())
		}
	}
	// Each node keeps its Pods' logs in its own directory: kubelets that shared the host's
	// /var/log/pods would delete each other's logs as orphans.
	agents, err := kube.CoreV1().Pods(v1.InstallNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-nodeagent"})
	if err != nil || len(agents.Items) != len(nodes.Items) {
		t.Fatalf("node agent Pods: %v (%d)", err, len(agents.Items))
	}
	for _, p := range agents.Items {
		dir := filepath.Join(cluster.Options().NodeDir(p.Spec.NodeName), "pods-logs", p.Namespace+"_"+p.Name+"_"+string(p.UID))
		if logs, _ := filepath.Glob(filepath.Join(dir, "vireo-nodeagent", "*.log")); len(logs) == 0 {
			t.Errorf("node agent %s on %s: no log in the node's log directory %s", p.Name, p.Spec.NodeName, dir)
		}
		// So are its Pods' network namespaces (the node agent's among them), not in the host's
		// /run/netns, where they would outlive the node as empty files.
		if netns, _ := os.ReadDir(filepath.Join(cluster.Options().NodeDir(p.Spec.NodeName), "run-netns")); len(netns) == 0 {
			t.Errorf("node %s: no Pod network namespace in its own run-netns directory", p.Spec.NodeName)
		}
		// kubectl logs reaches every node's kubelet (its serving certificate verified).
		if out := kubectl(t, "-n", p.Namespace, "logs", p.Name, "-c", "vireo-nodeagent", "--tail=1"); strings.TrimSpace(out) == "" {
			t.Errorf("kubectl logs of node agent %s on %s is empty", p.Name, p.Spec.NodeName)
		}
	}
}

// containerProcess is the first process of a Pod's running container (see containerPID); the test fails without one.
func containerProcess(t *testing.T, pod *corev1.Pod, container string) int {
	t.Helper()
	pid := containerPID(*pod, container)
	if pid == 0 {
		t.Fatalf("Pod %s/%s has no running container %s with a process", pod.Namespace, pod.Name, container)
	}
	return pid
}

// cgroupProcesses are the processes of container id on node (its pids cgroup, under the
// node's cgroup root); none when it is not found.
func cgroupProcesses(node, id string) []int {
	var pids []int
	root := filepath.Join("/sys/fs/cgroup", "pids", node)
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == id {
			b, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return filepath.SkipAll
		}
		return nil
	})
	return pids
}

// procStatus reads the fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}

// rootIsReadOnly reports whether process pid's root filesystem is mounted read-only.
func rootIsReadOnly(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			return strings.Split(f[5], ",")[0] == "ro"
		}
	}
	return false
}

// TestComponentsRunConfined: the container of each Vireo component (and of a launcher) runs as
// its image's or manifest's user, with seccomp filtering (RuntimeDefault), no_new_privs and a
// read-only root filesystem, as runc applied it; the node agent and its network helper alone
// are root, each with only the capabilities its manifest adds.
func TestComponentsRunConfined(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-demo.yaml")
	vmi := waitPhase(t, ns, "testvmi", v1.Running, 3*time.Minute)
	type want struct {
		namespace, selector, container, uid string
		// capEff is the root container's effective capability set.
		capEff, capNames string
	}
	for _, w := range []want{
		{v1.InstallNamespace, "app.kubernetes.io/name=vireo-apiserver", "vireo-apiserver", "65532", "", ""},
		{v1.InstallNamespace, "app.kubernetes.io/name=vireo-controller", "vireo-controller", "65532", "", ""},
		// CHOWN (0), DAC_OVERRIDE (1), FOWNER (3)
		{v1.InstallNamespace, "app.kubernetes.io/name=vireo-nodeagent", "vireo-nodeagent", "0", "000000000000000b", "CHOWN, DAC_OVERRIDE and FOWNER"},
		// NET_ADMIN (12), SYS_ADMIN (21)
		{v1.InstallNamespace, "app.kubernetes.io/name=vireo-nodeagent", "network-helper", "0", "0000000000201000", "NET_ADMIN and SYS_ADMIN"},
		{ns, "kubevirt.io/created-by=" + string(vmi.UID), "compute", "107", "", ""},
	} {
		pods, err := kube.CoreV1().Pods(w.namespace).List(t.Context(), metav1.ListOptions{LabelSelector: w.selector})
		if err != nil || len(pods.Items) == 0 {
			t.Fatalf("Pods %s in %s: %v (%d)", w.selector, w.namespace, err, len(pods.Items))
		}
		pod := &pods.Items[0]
		pid := containerProcess(t, pod, w.container)
		st := procStatus(t, pid)
		if uid := strings.Fields(st["Uid"]); len(uid) < 2 || uid[1] != w.uid {
			t.Errorf("%s/%s %s: uid %q, want %s", pod.Namespace, pod.Name, w.container, st["Uid"], w.uid)
		}
		if st["Seccomp"] != "2" || st["NoNewPrivs"] != "1" {
			t.Errorf("%s/%s %s: Seccomp %q NoNewPrivs %q, want 2 (filter) and 1", pod.Namespace, pod.Name, w.container, st["Seccomp"], st["NoNewPrivs"])
		}
		if !rootIsReadOnly(t, pid) {
			t.Errorf("%s/%s %s: root filesystem is writable", pod.Namespace, pod.Name, w.container)
		}
		if w.uid == "0" && st["CapEff"] != w.capEff {
			t.Errorf("%s/%s %s: effective capabilities %s, want %s alone (%s)", pod.Namespace, pod.Name, w.container, st["CapEff"], w.capNames, w.capEff)
		}
	}
}

// TestGuestOutlivesContainerdAndKubelet: killing the node's containerd and kubelet (SIGKILL) stops
// no container: the guest's QEMU is the same process afterwards, the VMI stays Running, and the
// restarted kubelet reports its Pods again.
func TestGuestOutlivesContainerdAndKubelet(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vmi-demo.yaml")
	vmi := waitPhase(t, ns, "testvmi", v1.Running, 3*time.Minute)
	qemu, _ := guestProcesses(t, ns, "testvmi", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes %v, want one", qemu)
	}
	node := vmi.Status.NodeName
	index := -1
	for i, n := range cluster.NodeNames() {
		if n == node {
			index = i
		}
	}
	for _, name := range []string{fmt.Sprintf("containerd-%d", index), node} {
		crash(t, name)
	}
	eventuallyWithin(t, "node "+node+" Ready again", 60*time.Second, func() error {
		n, err := kube.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
		if err != nil || !nodeIsReady(n) {
			return fmt.Errorf("node %s not Ready (%v)", node, err)
		}
		return nil
	})
	if err := syscall.Kill(qemu[0], 0); err != nil {
		t.Fatalf("QEMU %d is gone after containerd and the kubelet restarted: %v", qemu[0], err)
	}
	if again, _ := guestProcesses(t, ns, "testvmi", string(vmi.UID)); len(again) != 1 || again[0] != qemu[0] {
		t.Errorf("QEMU processes after the restarts %v, before %v", again, qemu)
	}
	got := waitPhase(t, ns, "testvmi", v1.Running, 10*time.Second)
	if got.Status.NodeName != node {
		t.Errorf("VMI moved to %s", got.Status.NodeName)
	}
}

// TestEtcdImageServes: the project's etcd image (artifacts/base's vireo-etcd) runs as its
// non-root user on a read-only root filesystem, turns Ready on etcd's own /readyz, and stores
// and returns a key through its v3 HTTP gateway.
func TestEtcdImageServes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "apply", "-f", manifestFile(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: %s
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
    - name: etcd
      image: %s/vireo/etcd:latest
      args: [--data-dir=/var/lib/etcd/data, --listen-client-urls=http://0.0.0.0:2379,
        --advertise-client-urls=http://127.0.0.1:2379, --listen-metrics-urls=http://0.0.0.0:2381]
      readinessProbe:
        httpGet: {path: /readyz, port: 2381}
        periodSeconds: 1
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
      volumeMounts: [{name: data, mountPath: /var/lib/etcd}]
  volumes: [{name: data, emptyDir: {}}]
`, ns, cluster.RegistryAddress())))
	waitPodsReady(t, ns, "etcd")
	base := "http://" + podIP(t, ns, "etcd") + ":2379/v3/kv/"
	key, value := base64.StdEncoding.EncodeToString([]byte("vireo")), base64.StdEncoding.EncodeToString([]byte("stored"))
	httpPost(t, base+"put", fmt.Sprintf(`{"key":%q,"value":%q}`, key, value))
	if got := httpPost(t, base+"range", fmt.Sprintf(`{"key":%q}`, key)); !strings.Contains(got, value) {
		t.Errorf("range of the key put: %s, want its value %s", got, value)
	}
}

// httpPost posts a JSON body to url and returns the answer's body, failing on a status other
// than 200.
func httpPost(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %v: %s", url, resp.Status, err, b)
	}
	return string(b)
}
