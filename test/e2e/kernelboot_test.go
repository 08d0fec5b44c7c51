package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// TestVMIKernelBoot: the kernelBoot example boots the guest's kernel and initrd, taken from
// their image in vireo-local's registry (an image volume of the launcher Pod, pulled by the
// kubelet), straight into QEMU (no disk, no bootloader), with the example's kernelArgs; a
// kernelPath the image lacks then fails its VMI with a reason naming the path and the image,
// without starting a guest, and the running guest outlives that VMI's launcher.
func TestVMIKernelBoot(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-kernelboot.yaml")
	con := openConsole(t, ns, "tiny-kernelboot")
	con.waitFor(t, guestMarker, 90*time.Second)
	vmi := waitVMI(t, ns, "tiny-kernelboot", 30*time.Second, "Running and Ready", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && condition(v, v1.VirtualMachineInstanceReady) == v1.ConditionTrue
	})
	qemu, _ := guestProcesses(t, ns, "tiny-kernelboot", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes %v, want one", qemu)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(qemu[0]) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	for _, want := range [][2]string{{"-kernel", protocol.KernelBootDir + "/boot/vmlinuz"}, {"-initrd", protocol.KernelBootDir + "/boot/initrd.img"}, {"-append", "console=tty0 quiet no_timer_check console=ttyS0"}} {
		if v := argAfter(args, want[0]); !strings.HasPrefix(v, want[1]) {
			t.Errorf("QEMU %s %q, want the file in the launcher's kernelBoot image volume (%q)", want[0], v, want[1])
		}
	}
	con.send(t, "echo $((6*7))")
	con.waitFor(t, "42", 10*time.Second)

	missing := "/boot/vmlinuz-missing"
	applyExample(t, ns, "vmi-kernelboot.yaml", func(m string) string {
		m = strings.Replace(m, "name: tiny-kernelboot", "name: no-kernel", 1)
		return strings.Replace(m, "kernelPath: /boot/vmlinuz", "kernelPath: "+missing, 1)
	})
	bad := waitPhase(t, ns, "no-kernel", v1.Failed, 60*time.Second)
	ready := conditionOf(bad, v1.VirtualMachineInstanceReady)
	if bad.Status.Reason != v1.ReasonKernelBootImageInvalid || ready == nil || ready.Status != v1.ConditionFalse ||
		!strings.Contains(ready.Message, missing) || !strings.Contains(ready.Message, "/vireo/tiny-kernelboot:latest") {
		t.Errorf("VMI with a missing kernel: reason %q, Ready %+v; want %s naming %s and the image", bad.Status.Reason, ready, v1.ReasonKernelBootImageInvalid, missing)
	}
	if qemu, _ := guestProcesses(t, ns, "no-kernel", string(bad.UID)); len(qemu) > 0 {
		t.Errorf("a QEMU runs for the VMI whose kernel is missing: %v", qemu)
	}
	// The failed VMI's launcher has stopped; the running guest is untouched (a stopping launcher
	// once killed every QEMU whose command line named the launchers' common private directory).
	eventually(t, "the failed VMI's launcher Pod gone", func() error {
		if out := kubectl(t, "-n", ns, "get", "pods", "-l", "kubevirt.io/created-by="+string(bad.UID), "-o", "name"); out != "" {
			return fmt.Errorf("pods left: %s", out)
		}
		return nil
	})
	con.send(t, "echo $((6*8))")
	con.waitFor(t, "48", 10*time.Second)
	if got := waitPhase(t, ns, "tiny-kernelboot", v1.Running, 5*time.Second); condition(got, v1.VirtualMachineInstanceReady) != v1.ConditionTrue {
		t.Errorf("the running VMI after the other's failure: %+v", got.Status)
	}
	kubectl(t, "-n", ns, "delete", "vmi", "tiny-kernelboot", "no-kernel", "--timeout=60s")
}

// argAfter is the argument after flag in args ("" when there is none).
func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
