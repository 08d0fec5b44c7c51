package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// guestMarker is what the test guest prints on its serial console once booted (test/images).
const guestMarker = "VIREO-GUEST-READY"

// applyExample applies an example manifest in ns, its images pointed at the e2e registry.
func applyExample(t *testing.T, ns, file string, edit ...func(string) string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "artifacts", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.ReplaceAll(string(b), "10.250.0.1:5000", cluster.RegistryAddress())
	for _, e := range edit {
		manifest = e(manifest)
	}
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))
}

// waitVMI polls the VMI until done accepts it, and returns it.
func waitVMI(t *testing.T, ns, name string, timeout time.Duration, what string, done func(*v1.VirtualMachineInstance) bool) *v1.VirtualMachineInstance {
	t.Helper()
	var vmi *v1.VirtualMachineInstance
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		vmi = got
		return done(got), nil
	})
	if err != nil {
		t.Fatalf("VMI %s/%s: %s not reached within %s; status: %+v", ns, name, what, timeout, vmiStatus(vmi))
	}
	return vmi
}

func vmiStatus(vmi *v1.VirtualMachineInstance) any {
	if vmi == nil {
		return nil
	}
	return vmi.Status
}

func waitPhase(t *testing.T, ns, name string, phase v1.VirtualMachineInstancePhase, timeout time.Duration) *v1.VirtualMachineInstance {
	t.Helper()
	return waitVMI(t, ns, name, timeout, "phase "+string(phase), func(v *v1.VirtualMachineInstance) bool { return v.Status.Phase == phase })
}

// launcherDir is the directory of the VMI's launcher on its node, seen from the host.
func launcherDir(vmi *v1.VirtualMachineInstance) string {
	for uid, node := range vmi.Status.ActivePods {
		return podDir(node, uid)
	}
	return ""
}

// podDir is the directory of launcher Pod uid on node, seen from the host: its emptyDir below
// the node's kubelet root.
func podDir(node string, uid types.UID) string {
	return filepath.Join(cluster.Options().NodeDir(node), "kubelet", "pods", protocol.EmptyDirPath(string(uid), launcherpodapi.RunDirVolumeName))
}

// console is a connection to a guest's serial console socket that keeps everything it read.
type console struct {
	conn net.Conn
	mu   sync.Mutex
	out  strings.Builder
}

// openConsole connects to the serial console of a scheduled VMI as soon as QEMU binds it.
func openConsole(t *testing.T, ns, name string) *console {
	t.Helper()
	vmi := waitVMI(t, ns, name, 60*time.Second, "a launcher Pod on a node", func(v *v1.VirtualMachineInstance) bool { return len(v.Status.ActivePods) > 0 })
	t.Cleanup(func() {
		if t.Failed() {
			logLauncherPods(t, ns)
		}
	})
	return openConsoleIn(t, launcherDir(vmi))
}

// logLauncherPods logs the launcher Pods of namespace ns and the namespace's events: what a
// failure to reach a guest needs explained.
func logLauncherPods(t *testing.T, ns string) {
	for _, args := range [][]string{
		{"-n", ns, "get", "vmi,pods", "-o", "wide"},
		{"-n", ns, "get", "pods", "-o", "jsonpath={range .items[*]}{.metadata.name}: {.status.phase} {.status.conditions} {.status.containerStatuses}{\"\\n\"}{end}"},
		{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
	} {
		out, errOut, err := kubectlResult(args...)
		t.Logf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
}

// openConsoleIn connects to the serial console socket in launcher directory dir.
func openConsoleIn(t *testing.T, dir string) *console {
	t.Helper()
	sock := filepath.Join(dir, "console.sock")
	var conn net.Conn
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		c, err := dialUnix(sock)
		conn = c
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("console socket %s never accepted a connection", sock)
	}
	c := &console{conn: conn}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

// output is everything the console printed so far.
func (c *console) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// waitFor waits until the console has printed want.
func (c *console) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return strings.Contains(c.out.String(), want), nil
	})
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("console never printed %q within %s; it printed:\n%s", want, timeout, c.out.String())
	}
}

func (c *console) send(t *testing.T, line string) {
	t.Helper()
	if _, err := fmt.Fprintf(c.conn, "%s\n", line); err != nil {
		t.Fatal(err)
	}
}

// guestProcesses lists the QEMU and launcher processes of a VMI.
func guestProcesses(t *testing.T, ns, name string, uid string) (qemu, launcher []int) {
	qemu = processes(t, func(cmdline, _ string) bool {
		return strings.Contains(cmdline, "qemu-system") && strings.Contains(cmdline, "guest="+ns+"_"+name+",")
	})
	launcher = processes(t, func(cmdline, _ string) bool {
		return strings.Contains(cmdline, "vireo-launcher") && strings.Contains(cmdline, "--uid "+uid)
	})
	return qemu, launcher
}

// dialUnix connects to a unix socket whose path may be longer than a socket address holds
// (the nodes' directories are deep under _output): through its directory's descriptor.
func dialUnix(path string) (net.Conn, error) {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}

// vmiGone is nil once VMI ns/name no longer exists (for eventually).
func vmiGone(t *testing.T, ns, name string) error {
	if v, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), name, metav1.GetOptions{}); err == nil {
		return fmt.Errorf("VMI %s/%s %s still there (%s)", ns, name, v.UID, v.Status.Phase)
	}
	return nil
}

// killQEMU kills the one QEMU of VMI ns/name (uid) with SIGKILL: a crash.
func killQEMU(t *testing.T, ns, name string, uid types.UID) {
	t.Helper()
	qemu, _ := guestProcesses(t, ns, name, string(uid))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of %s/%s: %v, want one", ns, name, qemu)
	}
	if err := syscall.Kill(qemu[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}
