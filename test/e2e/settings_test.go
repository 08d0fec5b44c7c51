package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/kvm"
	"github.com/vireo-dev/vireo/launcher/virt"
	"github.com/vireo-dev/vireo/nodeagent/deviceplugin"
)

// settingsName is the KubeVirt object artifacts/base installs.
const settingsName = "kubevirt"

// TestKubeVirtSettings: the installation's settings are the KubeVirt object kubectl lists in
// vireo-system with KubeVirt's columns; a second one is refused; and useEmulation decides whether
// a VMI may start on these nodes, which have no usable KVM: with false its launcher Pod asks for
// devices.kubevirt.io/kvm, which no node agent here advertises as healthy, so the VMI waits
// with the scheduler's reason; true lets the next one run under emulation. Then a healthy
// devices.kubevirt.io/kvm served on one node (from this test, with the node agent's device
// plugin package) lets the waiting VMI's Pod schedule there, and its launcher gets /dev/kvm,
// opens it as uid 107 and refuses only because this CPU cannot boot guests under it.
func TestKubeVirtSettings(t *testing.T) {
	out := kubectl(t, "get", "kubevirt", "-n", v1.InstallNamespace)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME AGE PHASE" {
		t.Fatalf("kubectl get kubevirt -n %s:\n%s\nwant KubeVirt's columns NAME AGE PHASE and one object", v1.InstallNamespace, out)
	}
	if row := strings.Fields(lines[1]); row[0] != settingsName || row[2] != string(v1.KubeVirtPhaseDeployed) {
		t.Errorf("row %v, want %s ... Deployed", row, settingsName)
	}
	if short := kubectl(t, "get", "kv", "-n", v1.InstallNamespace, "-o", "name"); strings.TrimSpace(short) != "kubevirt.kubevirt.io/"+settingsName {
		t.Errorf("kubectl get kv -o name: %q", short)
	}
	if ex := kubectl(t, "explain", "kubevirt.spec.configuration.developerConfiguration"); !strings.Contains(ex, "useEmulation") {
		t.Errorf("kubectl explain lacks useEmulation:\n%s", ex)
	}
	second := fmt.Sprintf("apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: second, namespace: %s}\nspec: {}\n", v1.InstallNamespace)
	if _, stderr, err := kubectlResult("create", "-f", manifestFile(t, second)); err == nil ||
		!strings.Contains(stderr, "Vireo honours only one KubeVirt object") {
		t.Errorf("creating a second KubeVirt object: %v\n%s\nwant a refusal saying there is only one", err, stderr)
	}

	if emu, reason := virt.DetectEmulation(); emu != virt.EmulationTCG {
		t.Skipf("this machine has KVM (%s): useEmulation does not matter here", reason)
	}
	t.Cleanup(func() {
		if _, stderr, err := kubectlResult(useEmulationPatch(true)...); err != nil {
			t.Errorf("restoring useEmulation: %v\n%s", err, stderr)
		}
	})
	for _, node := range cluster.NodeNames() {
		kvmOnNode(t, node, 0)
	}
	ns := namespace(t)
	setUseEmulation(t, false)
	applyExample(t, ns, "vmi-tiny.yaml", renamed("needs-kvm"))
	insufficient := "Insufficient " + kvm.ResourceName
	vmi := waitVMI(t, ns, "needs-kvm", time.Minute, "PodScheduled False: "+insufficient, func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstancePodScheduled)
		return c != nil && c.Status == v1.ConditionFalse && strings.Contains(c.Message, insufficient)
	})
	if vmi.Status.Phase != v1.Scheduling || vmi.Status.NodeName != "" {
		t.Errorf("VMI waiting for KVM: phase %s on %q, want Scheduling on no node", vmi.Status.Phase, vmi.Status.NodeName)
	}

	setUseEmulation(t, true)
	applyExample(t, ns, "vmi-tiny.yaml", renamed("allowed"))
	vmi = waitVMI(t, ns, "allowed", 2*time.Minute, "Running under emulation", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && condition(v, v1.VirtualMachineInstanceSoftwareEmulation) == v1.ConditionTrue
	})
	if vmi.Status.Phase != v1.Running {
		t.Errorf("VMI allowed: phase %s", vmi.Status.Phase)
	}

	node := cluster.NodeNames()[0]
	stop := serveKVMFromTest(t, node)
	vmi = waitPhase(t, ns, "needs-kvm", v1.Failed, 2*time.Minute)
	ready := conditionOf(vmi, v1.VirtualMachineInstanceReady)
	if vmi.Status.NodeName != node || vmi.Status.Reason != v1.ReasonEmulationNotAllowed || ready == nil ||
		!strings.Contains(ready.Message, "KVM is not available on node "+node+" (/dev/kvm opens but") ||
		!strings.Contains(ready.Message, "useEmulation is false in KubeVirt "+v1.InstallNamespace+"/"+settingsName) {
		t.Errorf("VMI given KVM: node %q, reason %q, Ready %+v; want it on %s, failed with %s saying /dev/kvm opens but the CPU cannot use it",
			vmi.Status.NodeName, vmi.Status.Reason, ready, node, v1.ReasonEmulationNotAllowed)
	} else {
		t.Logf("VMI given KVM: %s: %s", vmi.Status.Reason, ready.Message)
	}
	stop()
}

// serveKVMFromTest serves a healthy devices.kubevirt.io/kvm on node from this process (the
// kubelet takes the newest registration of a resource). The returned stop ends it and
// restarts the node's agent, whose device plugin then registers again, unhealthy here. The
// device is the host's /dev/kvm, or /dev/null in its place where the host has none (a PVM
// guest whose kvm module did not bind): either opens in the container and neither can boot
// a guest, as the CPU advertises neither vmx nor svm.
func serveKVMFromTest(t *testing.T, node string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hostPath := kvm.DevicePath
	if _, err := os.Stat(hostPath); err != nil {
		hostPath = os.DevNull
	}
	p := &deviceplugin.Plugin{Resource: kvm.ResourceName, Socket: "e2e-kvm.sock", Count: 1,
		Dir:     filepath.Join(cluster.Options().NodeDir(node), "kubelet", "device-plugins"),
		Devices: []*pluginapi.DeviceSpec{{ContainerPath: kvm.DevicePath, HostPath: hostPath, Permissions: "rw"}},
		Health:  func() (bool, string) { return true, "served by the e2e test" }, HealthInterval: time.Minute, CheckInterval: time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	kvmOnNode(t, node, 1)
	return func() {
		cancel()
		<-done
		killNodeAgent(t, node)
		kvmOnNode(t, node, 0)
	}
}

// kvmOnNode waits until node's allocatable devices.kubevirt.io/kvm is want; with 0 (no usable
// KVM here) its capacity must still show the node agent's 1000 devices.
func kvmOnNode(t *testing.T, node string, want int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s allocatable %d on %s", kvm.ResourceName, want, node), func() error {
		n, err := kube.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		capacity, allocatable := n.Status.Capacity[kvm.ResourceName], n.Status.Allocatable[kvm.ResourceName]
		if allocatable.Value() != want || (want == 0 && capacity.Value() != 1000) {
			return fmt.Errorf("capacity %s, allocatable %s", capacity.String(), allocatable.String())
		}
		return nil
	})
}

// useEmulationPatch is the kubectl command that sets useEmulation in the installation's settings.
func useEmulationPatch(allowed bool) []string {
	return []string{"-n", v1.InstallNamespace, "patch", "kubevirt", settingsName, "--type", "merge",
		"-p", fmt.Sprintf(`{"spec":{"configuration":{"developerConfiguration":{"useEmulation":%t}}}}`, allowed)}
}

// setUseEmulation patches useEmulation and waits until vireo-controller has taken the change up
// (status.observedGeneration), so that the next launcher Pod follows it.
func setUseEmulation(t *testing.T, allowed bool) {
	t.Helper()
	kubectl(t, useEmulationPatch(allowed)...)
	var last *v1.KubeVirt
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		kv, err := vireo.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(ctx, settingsName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = kv
		g := kv.Status.ObservedGeneration
		return g != nil && *g == kv.Generation, nil
	})
	if err != nil {
		t.Fatalf("vireo-controller did not take up useEmulation=%t within 30s: %+v", allowed, last)
	}
}

// renamed renames the example's object (the first name: in the manifest).
func renamed(name string) func(string) string {
	return func(m string) string { return strings.Replace(m, "  name: tiny\n", "  name: "+name+"\n", 1) }
}
