package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// settingsName is the KubeVirt object artifacts/base installs.
const settingsName = "kubevirt"

// TestKubeVirtSettings: the installation's settings are the KubeVirt object kubectl lists in
// vireo-system with KubeVirt's columns; a second one is refused; and useEmulation decides whether
// a VMI may start on these nodes, which have no usable KVM: false fails a new VMI with a message
// naming the setting, true lets the next one run under emulation.
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
	ns := namespace(t)
	setUseEmulation(t, false)
	applyExample(t, ns, "vmi-tiny.yaml", renamed("refused"))
	vmi := waitPhase(t, ns, "refused", v1.Failed, 2*time.Minute)
	ready := conditionOf(vmi, v1.VirtualMachineInstanceReady)
	want := "and spec.configuration.developerConfiguration.useEmulation is false in KubeVirt " + v1.InstallNamespace + "/" + settingsName
	if vmi.Status.Reason != launcher.ReasonEmulationNotAllowed || ready == nil ||
		!strings.Contains(ready.Message, "KVM is not available on node "+vmi.Status.NodeName) || !strings.Contains(ready.Message, want) {
		t.Errorf("failed VMI: reason %q, Ready %+v; want %s and a message naming the node and the setting",
			vmi.Status.Reason, ready, launcher.ReasonEmulationNotAllowed)
	}

	if ready != nil {
		t.Logf("refused VMI: reason %s: %s", vmi.Status.Reason, ready.Message)
	}
	setUseEmulation(t, true)
	applyExample(t, ns, "vmi-tiny.yaml", renamed("allowed"))
	vmi = waitVMI(t, ns, "allowed", 2*time.Minute, "Running under emulation", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && condition(v, v1.VirtualMachineInstanceSoftwareEmulation) == v1.ConditionTrue
	})
	if vmi.Status.Phase != v1.Running {
		t.Errorf("VMI allowed: phase %s", vmi.Status.Phase)
	}
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
