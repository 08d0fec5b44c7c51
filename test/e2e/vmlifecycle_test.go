package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestVMRerunOnFailureAndOnce: two VMs side by side. RerunOnFailure: a guest power-off leaves
// the VM Stopped with its VMI kept; started again, a QEMU crash brings a new VMI. Once: a
// power-off ends it for good, the finished VMI kept; halted, started (now Always) and stopped
// again by force. Deleting a VM then leaves nothing of it: no VMI, no launcher Pod, no QEMU, no
// launcher directory on its node.
func TestVMRerunOnFailureAndOnce(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for _, vm := range []struct{ name, strategy string }{{"rerun", "RerunOnFailure"}, {"once", "Once"}} {
		applyExample(t, ns, "vm-demo.yaml", func(m string) string {
			m = strings.Replace(m, "name: demo", "name: "+vm.name, 1)
			return strings.Replace(m, "runStrategy: Always", "runStrategy: "+vm.strategy, 1)
		})
	}
	rerun, once := openConsole(t, ns, "rerun"), openConsole(t, ns, "once")
	rerun.waitFor(t, guestMarker, 90*time.Second)
	once.waitFor(t, guestMarker, 90*time.Second)
	first := waitPhase(t, ns, "rerun", v1.Running, 10*time.Second)
	onceVMI := waitPhase(t, ns, "once", v1.Running, 10*time.Second)
	rerun.send(t, "sync; poweroff -f") // -f: the guest's init is a script, not busybox init
	once.send(t, "sync; poweroff -f")
	for _, name := range []string{"rerun", "once"} {
		waitPhase(t, ns, name, v1.Succeeded, 60*time.Second)
		waitVMRow(t, ns, name, "Stopped", "False")
	}
	// The controller decided with the status it wrote: the finished VMIs are the same ones.
	if v := waitPhase(t, ns, "once", v1.Succeeded, time.Second); v.UID != onceVMI.UID {
		t.Errorf("Once: VMI %s after the power-off, want the finished %s kept", v.UID, onceVMI.UID)
	}
	if v := waitPhase(t, ns, "rerun", v1.Succeeded, time.Second); v.UID != first.UID {
		t.Errorf("RerunOnFailure: VMI %s after the power-off, want the finished %s kept", v.UID, first.UID)
	}

	// Started again, then crashed: RerunOnFailure replaces the failed VMI.
	if out := kubectlVireo(t, "start", "rerun", "-n", ns); !strings.Contains(out, "scheduled to be started") {
		t.Fatalf("kubectl vireo start rerun: %s", out)
	}
	second := waitVMI(t, ns, "rerun", 120*time.Second, "a new VMI Running", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != first.UID && v.Status.Phase == v1.Running
	})
	killQEMU(t, ns, "rerun", second.UID)
	third := waitVMI(t, ns, "rerun", 120*time.Second, "a VMI replacing the crashed one Running", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != second.UID && v.UID != first.UID && v.Status.Phase == v1.Running
	})

	// Once, halted: its finished VMI goes; start makes it Always and runs it, stop halts it again.
	kubectl(t, "-n", ns, "patch", "vm", "once", "--type", "merge", "-p", `{"spec":{"runStrategy":"Halted"}}`)
	eventuallyWithin(t, "the halted VM's finished VMI gone", 60*time.Second, func() error { return vmiGone(t, ns, "once") })
	kubectlVireo(t, "start", "once", "-n", ns)
	waitVMRow(t, ns, "once", "Running", "True")
	if vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "once", metav1.GetOptions{}); err != nil || vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != v1.RunStrategyAlways {
		t.Errorf("a Halted VM after start: %v (%v), want runStrategy Always", vm.Spec.RunStrategy, err)
	}
	kubectlVireo(t, "stop", "once", "-n", ns, "--force", "--grace-period", "0")
	waitVMRow(t, ns, "once", "Stopped", "False")

	// Deleting the VM takes everything of it away.
	dir := launcherDir(third)
	kubectl(t, "-n", ns, "delete", "vm", "rerun", "--timeout=90s")
	eventuallyWithin(t, "nothing left of the deleted VM rerun", 90*time.Second, func() error {
		if err := vmiGone(t, ns, "rerun"); err != nil {
			return err
		}
		if out := kubectl(t, "-n", ns, "get", "pods", "-l", "kubevirt.io/created-by="+string(third.UID), "-o", "name"); out != "" {
			return fmt.Errorf("launcher Pods left: %s", out)
		}
		if qemu, launcher := guestProcesses(t, ns, "rerun", string(third.UID)); len(qemu)+len(launcher) > 0 {
			return fmt.Errorf("QEMU %v and launcher %v processes left", qemu, launcher)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			return fmt.Errorf("launcher directory %s left (%v)", dir, err)
		}
		return nil
	})
}

// TestVMCrashLoopRecovers: a VM whose VMI fails on every start (a kernelBoot image without the
// kernel it names) shows CrashLoopBackOff, starts again only after KubeVirt's growing delays
// (10 s, then 40 s, from each failure; each failed VMI counted once), and runs once its
// template is fixed.
func TestVMCrashLoopRecovers(t *testing.T) {
	ns := namespace(t)
	manifest := fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: loop
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        memory:
          guest: 128Mi
        firmware:
          kernelBoot:
            kernelArgs: console=ttyS0
            container:
              image: %s/vireo/tiny-kernelboot:latest
              kernelPath: /boot/vmlinuz-missing
              initrdPath: /boot/initrd.img
        devices: {}
`, cluster.RegistryAddress())
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))
	waitVMRow(t, ns, "loop", "CrashLoopBackOff", "False")
	// Each failure's delay: from when the VM shows it to its retryAfterTimestamp.
	delays := map[int32]time.Duration{}
	var failedUIDs []string
	eventuallyWithin(t, "two failed starts", 120*time.Second, func() error {
		vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "loop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		f := vm.Status.StartFailure
		if f == nil || f.RetryAfterTimestamp == nil {
			return fmt.Errorf("VM startFailure %+v", f)
		}
		if _, seen := delays[f.ConsecutiveFailCount]; !seen {
			delays[f.ConsecutiveFailCount] = time.Until(f.RetryAfterTimestamp.Time)
			failedUIDs = append(failedUIDs, string(f.LastFailedVMIUID))
		}
		if f.ConsecutiveFailCount < 2 {
			return fmt.Errorf("%d failed starts", f.ConsecutiveFailCount)
		}
		return nil
	})
	// The timestamp has whole seconds, the jitter adds at most 10 %, the poll lags 0.2 s.
	if d, ok := delays[1]; !ok || d < 8*time.Second || d > 12*time.Second {
		t.Errorf("delay after the first failure: %s (seen: %v), want 10 s plus jitter", d, ok)
	}
	if d := delays[2]; d < 38*time.Second || d > 45*time.Second {
		t.Errorf("delay after the second failure: %s, want 40 s plus jitter", d)
	}
	if len(failedUIDs) < 2 || failedUIDs[0] == failedUIDs[1] || failedUIDs[0] == "" {
		t.Errorf("failed VMIs %v: want two different ones", failedUIDs)
	}
	kubectl(t, "-n", ns, "patch", "vm", "loop", "--type", "json", "-p",
		`[{"op":"replace","path":"/spec/template/spec/domain/firmware/kernelBoot/container/kernelPath","value":"/boot/vmlinuz"}]`)
	waitVMI(t, ns, "loop", 120*time.Second, "a VMI of the fixed template on a node", func(v *v1.VirtualMachineInstance) bool {
		return !slices.Contains(failedUIDs, string(v.UID)) && v.Status.Phase != v1.Failed && len(v.Status.ActivePods) > 0
	})
	openConsole(t, ns, "loop").waitFor(t, guestMarker, 90*time.Second)
	waitVMRow(t, ns, "loop", "Running", "True")
	vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "loop", metav1.GetOptions{})
	if err != nil || vm.Status.StartFailure != nil {
		t.Errorf("VM after recovery: startFailure %+v (%v), want none", vm.Status.StartFailure, err)
	}
}
