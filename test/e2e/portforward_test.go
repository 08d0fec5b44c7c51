package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// portForwardVM is a VM running the test guest, its web server's port 80 forwarded.
const portForwardVM = `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: pf}
spec:
  runStrategy: Always
  template:
    spec:
      terminationGracePeriodSeconds: 5
      domain:
        resources: {requests: {memory: 128Mi}}
        devices:
          disks: [{name: containerdisk, disk: {bus: virtio}}]
          interfaces: [{name: default, masquerade: {}, ports: [{name: http, port: 80}]}]
      networks: [{name: default, pod: {}}]
      volumes: [{name: containerdisk, containerDisk: {image: %s/vireo/tiny-containerdisk:latest}}]
`

// guestPage is the start of what the test guest's web server answers on /.
const guestPage = "vireo-tiny-guest"

// TestPortForward: the guest's web server answers through the port-forward subresource of its
// VMI and of its VM, with vireoctl listening locally and with vireoctl --stdio (ssh's
// ProxyCommand); a port the interface does not forward, a viewer, a paused VMI and a stopped VM
// are refused with KubeVirt's codes and a reason.
func TestPortForward(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, fmt.Sprintf(portForwardVM, cluster.RegistryAddress())))
	waitPhase(t, ns, "pf", v1.Running, 2*time.Minute)

	// vireoctl port-forward vm/NAME/NS 0:80: a local port, one tunnel per connection.
	local := startPortForward(t, "vm/pf/"+ns, "0:80")
	eventuallyWithin(t, "the guest's web server through vireoctl port-forward", 90*time.Second, func() error {
		resp, err := http.Get("http://" + local + "/")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if !strings.HasPrefix(string(body), guestPage) {
			return fmt.Errorf("HTTP %d: %q", resp.StatusCode, body)
		}
		return nil
	})

	// --stdio on the VMI, as ssh's ProxyCommand uses it: the tunnel ends when the guest closes.
	out := vireoctlPipe(t, "GET / HTTP/1.0\r\n\r\n", "-n", ns, "port-forward", "--stdio", "vmi/pf", "80")
	if !strings.Contains(out, "200 OK") || !strings.Contains(out, guestPage) {
		t.Errorf("port-forward --stdio answered %q", out)
	}

	path := func(resource, rest string) string {
		return fmt.Sprintf("/apis/subresources.kubevirt.io/v1/namespaces/%s/%s/pf/portforward/%s", ns, resource, rest)
	}
	refusal(t, admin, path("virtualmachineinstances", "22"), http.StatusBadRequest, "not one of them")
	refusal(t, admin, path("virtualmachineinstances", "80/sctp"), http.StatusBadRequest, "must be tcp or udp")
	bind(t, ns, "viewer", "view")
	viewer, err := cluster.UserConfig("viewer", nil)
	if err != nil {
		t.Fatal(err)
	}
	refusal(t, viewer, path("virtualmachines", "80"), http.StatusForbidden, "forbidden")

	if out, err := vireoctl(t, "-n", ns, "pause", "vmi", "pf"); err != nil {
		t.Fatalf("pause: %v %s", err, out)
	}
	waitVMI(t, ns, "pf", time.Minute, "the Paused condition", func(v *v1.VirtualMachineInstance) bool {
		c := v.Status.Condition(v1.VirtualMachineInstancePaused)
		return c != nil && c.Status == v1.ConditionTrue
	})
	refusal(t, admin, path("virtualmachineinstances", "80"), http.StatusConflict, "VMI is paused")

	kubectl(t, "-n", ns, "patch", "vm", "pf", "--type", "merge", "-p", `{"spec":{"runStrategy":"Halted"}}`)
	eventuallyWithin(t, "the stopped VM refusing port-forward", 2*time.Minute, func() error {
		_, resp, err := dialStream(t, admin, path("virtualmachines", "80"))
		if err == nil || resp == nil || resp.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "VMI is not started") {
			return fmt.Errorf("%v", err)
		}
		return nil
	})
}

// startPortForward runs vireoctl port-forward as the admin until the test ends and returns the
// local address of its (single) forwarded port.
func startPortForward(t *testing.T, target string, port string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", cluster.Options().Kubeconfig(), "port-forward", target, port)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("vireoctl port-forward %s %s: %s", target, port, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`^Forwarding tcp (\S+) -> `).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("vireoctl port-forward printed %q (%v): %s", line, err, stderr.String())
	}
	return m[1]
}
