package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster"
)

func vmiNamed(name string) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}},
			Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{
				ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"},
			}}},
		},
	}
}

// vireoPods are the Pods of one of Vireo's Deployments (two replicas each: the e2e
// installation runs the control plane highly available), but those being deleted.
func vireoPods(t *testing.T, name string) []corev1.Pod {
	t.Helper()
	pods, err := kube.CoreV1().Pods("vireo-system").List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + name})
	if err != nil {
		t.Fatalf("%s Pods: %v", name, err)
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// vireoPod is a ready Pod of one of Vireo's Deployments.
func vireoPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "a ready "+name+" Pod", func() error {
		for _, p := range vireoPods(t, name) {
			if podReady(&p) && len(p.Status.ContainerStatuses) == 1 {
				pod = &p
				return nil
			}
		}
		return fmt.Errorf("no ready %s Pod", name)
	})
	return pod
}

func vireoAPIServerPod(t *testing.T) *corev1.Pod { return vireoPod(t, "vireo-apiserver") }

// killAndAwaitRestart kills the process of one of Vireo's Pods and waits until its node has
// restarted it: the same Pod, a higher restart count, Ready again. It returns the Pod then.
func killAndAwaitRestart(t *testing.T, before *corev1.Pod) *corev1.Pod {
	t.Helper()
	pids := podProcessIDs(t, before.Name)
	if len(pids) != 1 {
		t.Fatalf("Pod %s has processes %v, want one", before.Name, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var after *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(before.Namespace).Get(ctx, before.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		after = p
		return after.Status.ContainerStatuses[0].RestartCount > before.Status.ContainerStatuses[0].RestartCount && podReady(after), nil
	})
	if err != nil {
		t.Fatalf("Pod %s not back with a higher restart count: %+v", before.Name, after.Status.ContainerStatuses)
	}
	return after
}

// TestKilledVireoControllerComesBack: the node restarts vireo-controller's container, and it
// reconciles again (a deleted VMI's finalizer is released).
func TestKilledVireoControllerComesBack(t *testing.T) {
	ns := namespace(t)
	killAndAwaitRestart(t, controllerLeader(t))
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(t.Context(), vmiNamed("after-restart"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "delete", "vmi", "after-restart", "--timeout=60s")
}

// vireoAPIServerAddress is where a ready vireo-apiserver Pod listens.
func vireoAPIServerAddress(t *testing.T) string { return podAddress(vireoAPIServerPod(t)) }

// podAddress is where a vireo-apiserver Pod listens.
func podAddress(p *corev1.Pod) string { return net.JoinHostPort(p.Status.PodIP, "8443") }

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestRestartingVireoAPIServerKeepsObjects(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	for i := range 3 {
		if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmiNamed(fmt.Sprintf("keep-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Kill a vireo-apiserver's process: its node restarts the container in the same Pod.
	start := time.Now()
	pod := killAndAwaitRestart(t, vireoAPIServerPod(t))
	restarted := time.Now()
	// Ready means ready for the aggregator: its front-proxy requests are authenticated at once
	// (before the fix, the first ~100 ms after readiness answered 403 to system:anonymous).
	url := "https://" + podAddress(pod) + "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances"
	if status := directRequest(t, url, cluster.Options().PKI()+"/front-proxy-client.crt"); status != 200 {
		t.Fatalf("first front-proxy request after the restart: HTTP %d, want 200", status)
	}
	// The aggregator notices the endpoint is back within its availability check period.
	if err := cluster.WaitForAPIServices(ctx, 35*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("vireo-apiserver restarted and Ready in %s; APIServices Available %s later", restarted.Sub(start).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	list, err := vireo.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("after restart: %d VMIs (err %v), want 3", len(list.Items), err)
	}
}

func TestDeletingANamespaceDeletesItsVMIs(t *testing.T) {
	t.Parallel()
	ctx, ns := context.Background(), namespace(t)
	for _, n := range []string{"a", "b"} {
		if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmiNamed(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubectl(t, "delete", "namespace", ns, "--wait=false")
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		left, _ := vireo.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
		t.Fatalf("namespace %s still exists; VMIs left: %d", ns, len(left.Items))
	}
}

// TestArtifactsBaseDryRun renders the kustomize base with fresh certificates and sends
// it to the local installation with a server-side dry run.
func TestArtifactsBaseDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(repo, "artifacts", "base"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copying artifacts/base: %v: %s", err, out)
	}
	base := filepath.Join(dir, "base")
	_ = os.RemoveAll(filepath.Join(base, "certs"))
	if err := localcluster.WriteArtifactCerts(filepath.Join(base, "certs")); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := kubectlResult("apply", "--dry-run=server", "-k", base)
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server -k artifacts/base: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"apiservice.apiregistration.k8s.io/v1.kubevirt.io", "deployment.apps/vireo-apiserver", "statefulset.apps/vireo-etcd", "daemonset.apps/vireo-nodeagent", "clusterrole.rbac.authorization.k8s.io/kubevirt.io:view"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %s:\n%s", want, out)
		}
	}
}
