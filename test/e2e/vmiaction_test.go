package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// putSubresource PUTs body to a subresource through kube-apiserver and returns the status code
// and the error's message.
func putSubresource(t *testing.T, c versioned.Interface, group, ns, resource, name, action, body string) (int, string) {
	t.Helper()
	var code int
	res := c.KubevirtV1().RESTClient().Put().
		AbsPath("/apis", group, "v1", "namespaces", ns, resource, name, action).
		Body([]byte(body)).Do(t.Context()).StatusCode(&code)
	msg := ""
	if err := res.Error(); err != nil {
		msg = err.Error()
	}
	return code, msg
}

// kubectlVireo runs `kubectl vireo ARGS` (the kubectl plugin) and returns its output.
func kubectlVireo(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "kubectl"), append([]string{"vireo"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+cluster.Options().BinDir+":"+os.Getenv("PATH"), "KUBECONFIG="+cluster.Options().Kubeconfig())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl vireo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkGuestActions drives pause, unpause, softreboot and reset of the running VMI ns/name,
// whose guest has booted and prints to con (after checking its AgentConnected condition): a
// paused guest runs nothing typed at its console until unpaused; a soft reboot boots the guest
// again in the same VMI, through its guest agent; a reset boots it again at once, without the
// power button. The refusals are KubeVirt's.
func checkGuestActions(t *testing.T, ns, name string, con *console) {
	vmi, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const sub, core = "subresources.kubevirt.io", "kubevirt.io"
	put := func(group, action, body string) (int, string) {
		return putSubresource(t, vireo, group, ns, "virtualmachineinstances", name, action, body)
	}
	checkAgentCondition(t, ns, name, con)
	viewer := userClient(t, "viewer")
	eventually(t, "the viewer is refused pause", func() error {
		if code, msg := putSubresource(t, viewer, sub, ns, "virtualmachineinstances", name, "pause", "{}"); code != 403 {
			return fmt.Errorf("viewer pause: %d %s, want 403", code, msg)
		}
		return nil
	})
	if code, msg := put(sub, "unpause", "{}"); code != 409 || !strings.Contains(msg, "VMI is not paused") {
		t.Errorf("unpause of a running VMI: %d %q, want 409 VMI is not paused", code, msg)
	}
	if code, msg := putSubresource(t, vireo, sub, ns, "virtualmachineinstances", "no-such-vmi", "pause", "{}"); code != 404 {
		t.Errorf("pause of a VMI that does not exist: %d %q, want 404", code, msg)
	}
	if code, msg := put(core, "pause", `{"dryRun":["All"]}`); code != 200 {
		t.Fatalf("dry-run pause: %d %s", code, msg)
	}
	if code, msg := put(core, "pause", `{"dryRun":"All"}`); code != 400 || !strings.Contains(msg, "PauseOptions") {
		t.Errorf("pause with a malformed body: %d %q, want 400 naming PauseOptions", code, msg)
	}
	// The dry run left the guest running: it answers at once.
	con.send(t, "echo DRY-$((20+1))")
	con.waitFor(t, "DRY-21", 30*time.Second)

	if out := kubectlVireo(t, "pause", "vmi", name, "-n", ns); !strings.Contains(out, "scheduled to pause") {
		t.Errorf("kubectl vireo pause: %q", out)
	}
	waitVMI(t, ns, name, 30*time.Second, "Paused condition PausedByUser", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstancePaused)
		return c != nil && c.Status == v1.ConditionTrue && c.Reason == "PausedByUser"
	})
	waitVMRow(t, ns, name, "Paused", "False")
	con.send(t, "echo PAUSED-$((40+2))")
	con.neverWithin(t, "PAUSED-42", 2*time.Second)
	if code, msg := put(sub, "pause", "{}"); code != 409 || !strings.Contains(msg, "VMI is already paused") {
		t.Errorf("second pause: %d %q, want 409 VMI is already paused", code, msg)
	}
	if code, msg := put(core, "softreboot", ""); code != 409 || !strings.Contains(msg, "VMI is paused") {
		t.Errorf("softreboot of a paused VMI: %d %q, want 409 VMI is paused", code, msg)
	}
	if out := kubectlVireo(t, "unpause", "vm", name, "-n", ns); !strings.Contains(out, "scheduled to unpause") {
		t.Errorf("kubectl vireo unpause: %q", out)
	}
	con.waitFor(t, "PAUSED-42", 30*time.Second)
	waitVMI(t, ns, name, 30*time.Second, "no Paused condition", func(v *v1.VirtualMachineInstance) bool {
		return conditionOf(v, v1.VirtualMachineInstancePaused) == nil
	})

	// A pause followed at once by an unpause, as a script does: the launcher decides, not the
	// VMI's status, which has not caught up yet.
	for i := range 3 {
		if code, msg := put(sub, "pause", ""); code != 200 {
			t.Fatalf("pause %d of a quick pair: %d %s", i, code, msg)
		}
		if code, msg := put(sub, "unpause", ""); code != 200 {
			t.Fatalf("unpause %d right after its pause: %d %s", i, code, msg)
		}
	}
	con.send(t, "echo QUICK-$((3*3))")
	con.waitFor(t, "QUICK-9", 30*time.Second)

	// With the guest agent connected, the soft reboot goes through it (KubeVirt's way), not
	// through the power button.
	if code, msg := put(core, "softreboot", ""); code != 200 {
		t.Fatalf("softreboot: %d %s", code, msg)
	}
	con.waitFor(t, "reboot requested by the guest agent", 60*time.Second)
	con.waitForCount(t, guestMarker, 2, 120*time.Second)
	after, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || after.UID != vmi.UID || after.Status.Phase != v1.Running {
		t.Errorf("after the soft reboot: VMI %v phase %v (%v), want the same VMI %s Running", after.UID, after.Status.Phase, err, vmi.UID)
	}

	const powerButton = "power button pressed"
	if out := kubectlVireo(t, "reset", name, "-n", ns); !strings.Contains(out, "was reset") {
		t.Errorf("kubectl vireo reset: %q", out)
	}
	con.waitForCount(t, guestMarker, 3, 120*time.Second)
	if n := strings.Count(con.output(), powerButton); n != 0 {
		t.Errorf("the guest saw its power button %d times after a soft reboot through its agent and a reset, want none", n)
	}
	after, err = vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || after.UID != vmi.UID || after.Status.Phase != v1.Running {
		t.Errorf("after the reset: VMI %v phase %v (%v), want the same VMI %s Running", after.UID, after.Status.Phase, err, vmi.UID)
	}
}

// guestInfo GETs a guest-agent subresource of VMI ns/name (guestosinfo, userlist,
// filesystemlist) as cs and returns the HTTP status and body.
func guestInfo(t *testing.T, cs versioned.Interface, ns, name, subresource string) (int, []byte) {
	var code int
	raw, _ := cs.KubevirtV1().RESTClient().Get().
		AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", ns, "virtualmachineinstances", name, subresource).
		Do(t.Context()).StatusCode(&code).Raw()
	return code, raw
}

// checkAgentCondition: the guest's qemu-ga connects (AgentConnected True, as KubeVirt reports
// it; status.guestOSInfo says what the guest runs); the guestosinfo, userlist and
// filesystemlist subresources answer a viewer with KubeVirt's types, and vireoctl prints them;
// with qemu-ga stopped in the guest the condition goes and the subresources answer KubeVirt's
// 409; started again, the condition comes back.
func checkAgentCondition(t *testing.T, ns, name string, con *console) {
	t.Helper()
	agent := func(want bool) func(*v1.VirtualMachineInstance) bool {
		return func(v *v1.VirtualMachineInstance) bool {
			c := conditionOf(v, v1.VirtualMachineInstanceAgentConnected)
			return (c != nil && c.Status == v1.ConditionTrue) == want
		}
	}
	waitVMI(t, ns, name, 60*time.Second, "AgentConnected True and guestOSInfo", func(v *v1.VirtualMachineInstance) bool {
		return agent(true)(v) && v.Status.GuestOSInfo.ID == "vireo-tiny" && v.Status.GuestOSInfo.KernelRelease != ""
	})
	viewer := userClient(t, "viewer")
	getInfo := func(subresource string) (int, []byte) { return guestInfo(t, viewer, ns, name, subresource) }
	var info v1.VirtualMachineInstanceGuestAgentInfo
	eventually(t, "the viewer reads guestosinfo", func() error {
		code, raw := getInfo("guestosinfo")
		if code != 200 {
			return fmt.Errorf("guestosinfo: %d %s", code, raw)
		}
		return json.Unmarshal(raw, &info)
	})
	if info.Kind != "VirtualMachineInstanceGuestAgentInfo" || info.OS.ID != "vireo-tiny" || info.OS.PrettyName != "Vireo tiny test guest" ||
		info.GAVersion == "" || len(info.SupportedCommands) == 0 || info.Hostname == "" {
		t.Errorf("guestosinfo: %+v", info)
	}
	if code, raw := getInfo("filesystemlist"); code != 200 || !strings.Contains(string(raw), `"kind":"VirtualMachineInstanceFileSystemList"`) {
		t.Errorf("filesystemlist: %d %s", code, raw)
	}
	if code, raw := getInfo("userlist"); code != 200 || !strings.Contains(string(raw), `"items":`) {
		t.Errorf("userlist: %d %s", code, raw)
	}
	if out := kubectlVireo(t, "guestosinfo", name, "-n", ns); !strings.Contains(out, `"prettyName": "Vireo tiny test guest"`) {
		t.Errorf("kubectl vireo guestosinfo printed %q", out)
	}
	// Freeze and unfreeze through the agent, as virtctl sends them.
	if code, msg := putSubresource(t, vireo, "subresources.kubevirt.io", ns, "virtualmachineinstances", name, "freeze", `{"unfreezeTimeout":"5m0s"}`); code != 200 {
		t.Fatalf("freeze: %d %s", code, msg)
	}
	if code, raw := getInfo("guestosinfo"); code != 200 || !strings.Contains(string(raw), `"fsFreezeStatus":"frozen"`) {
		t.Errorf("guestosinfo of a frozen guest: %d %s, want fsFreezeStatus frozen", code, raw)
	}
	waitVMI(t, ns, name, 30*time.Second, "status.fsFreezeStatus frozen", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.FSFreezeStatus == "frozen"
	})
	// A second freeze (a snapshot tool retrying) succeeds and only restarts the timeout.
	if code, msg := putSubresource(t, vireo, "subresources.kubevirt.io", ns, "virtualmachineinstances", name, "freeze", `{"unfreezeTimeout":"5m0s"}`); code != 200 {
		t.Errorf("freeze of a frozen guest: %d %s, want 200", code, msg)
	}
	if out := kubectlVireo(t, "unfreeze", name, "-n", ns); !strings.Contains(out, "scheduled to unfreeze") {
		t.Errorf("kubectl vireo unfreeze: %q", out)
	}
	if code, raw := getInfo("guestosinfo"); code != 200 || strings.Contains(string(raw), "fsFreezeStatus") {
		t.Errorf("guestosinfo of a thawed guest: %d %s, want no fsFreezeStatus", code, raw)
	}
	waitVMI(t, ns, name, 30*time.Second, "no status.fsFreezeStatus after the unfreeze", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.FSFreezeStatus == ""
	})
	con.send(t, "kill $(cat /run/qemu-ga.pid); echo AGENT-STOPPED-$((6*7))")
	con.waitFor(t, "AGENT-STOPPED-42", 30*time.Second)
	waitVMI(t, ns, name, 30*time.Second, "no AgentConnected after qemu-ga stopped", agent(false))
	if code, raw := getInfo("guestosinfo"); code != 409 || !strings.Contains(string(raw), "VMI does not have guest agent connected") {
		t.Errorf("guestosinfo without an agent: %d %s, want KubeVirt's 409", code, raw)
	}
	if code, msg := putSubresource(t, vireo, "kubevirt.io", ns, "virtualmachineinstances", name, "freeze", ""); code != 409 || !strings.Contains(msg, "guest agent") {
		t.Errorf("freeze without an agent: %d %q, want 409 naming the guest agent", code, msg)
	}
	con.send(t, "qemu-ga -d -m virtio-serial -p /dev/$(grep -l org.qemu.guest_agent.0 /sys/class/virtio-ports/*/name | cut -d/ -f5) -f /run/qemu-ga.pid")
	waitVMI(t, ns, name, 30*time.Second, "AgentConnected True after qemu-ga started again", agent(true))
}

// neverWithin checks that the console does not print unwanted during d (a guest that must not
// run: polled to the end of the window, the only way to observe an absence).
func (c *console) neverWithin(t *testing.T, unwanted string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if strings.Contains(c.out.String(), unwanted) {
			t.Errorf("the console printed %q within %s; it printed:\n%s", unwanted, d, c.out.String())
			return true, nil
		}
		return false, nil
	})
}

// waitForCount waits until the console has printed want n times.
func (c *console) waitForCount(t *testing.T, want string, n int, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return strings.Count(c.out.String(), want) >= n, nil
	})
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("console printed %q fewer than %d times within %s; it printed:\n%s", want, n, timeout, c.out.String())
	}
}
