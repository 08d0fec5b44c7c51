package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// everyPortVMI runs the test guest with an interface that lists no ports: KubeVirt's
// masquerade forwards every port then.
const everyPortVMI = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: open, labels: {app: open-guest}}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    resources: {requests: {memory: 128Mi}}
    devices:
      disks: [{name: containerdisk, disk: {bus: virtio}}]
      interfaces: [{name: default, masquerade: {}}]
  networks: [{name: default, pod: {}}]
  volumes: [{name: containerdisk, containerDisk: {image: %s/vireo/tiny-containerdisk:latest}}]
`

// TestEveryPortReachesTheGuest: with an interface that lists no ports, the guest's web server
// (80) and SSH server (22) answer through port-forward and through a Service that selects the
// VMI's labels (kube-proxy on the node, to the launcher Pod, to the guest). The guest got its
// address, router and host name from the launcher's DHCP server: its page names it "open" (the
// lease's host name), and it answers clients outside its network (through its default route).
// The guest reaches its own Service too (hairpin).
func TestEveryPortReachesTheGuest(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, fmt.Sprintf(everyPortVMI, cluster.RegistryAddress())))
	vmi := waitPhase(t, ns, "open", v1.Running, 2*time.Minute)

	eventuallyWithin(t, "the guest's web server (an unlisted port) through port-forward", 90*time.Second, func() error {
		out, err := vireoctlPipeErr("GET / HTTP/1.0\r\n\r\n", "-n", ns, "port-forward", "--stdio", "vmi/open", "80")
		if err != nil || !strings.Contains(out, guestPage+" open") {
			return fmt.Errorf("%v: %q", err, out)
		}
		return nil
	})

	svc, err := kube.CoreV1().Services(ns).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "open"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "open-guest"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(80)},
			{Name: "ssh", Port: 2222, TargetPort: intstr.FromInt32(22)},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := vmi.Status.NodeName
	eventuallyWithin(t, "the guest's web server through the Service", 60*time.Second, func() error {
		said, err := readFromNode(node, net.JoinHostPort(svc.Spec.ClusterIP, "8080"), "GET / HTTP/1.0\r\n\r\n")
		if err != nil || !strings.Contains(said, guestPage+" open") {
			return fmt.Errorf("%v: %q", err, said)
		}
		return nil
	})
	eventuallyWithin(t, "the guest's SSH server through the Service", 30*time.Second, func() error {
		said, err := readFromNode(node, net.JoinHostPort(svc.Spec.ClusterIP, "2222"), "")
		if !strings.HasPrefix(said, "SSH-2.0-") {
			return fmt.Errorf("%v: %q", err, said)
		}
		return nil
	})

	// Hairpin: the guest reaches its own Service (out through the masquerade, kube-proxy, back
	// in through the Pod's DNAT).
	con := openConsole(t, ns, "open") // the guest is up: its web server answered above
	// (busybox 1.35's wget -T crashes: timeout bounds it instead.)
	hairpin := fmt.Sprintf("timeout 5 wget -q -O- http://%s/ | sed 's/^/HAIRPIN /'", net.JoinHostPort(svc.Spec.ClusterIP, "8080"))
	want := "HAIRPIN " + guestPage + " open"
	// Each try waits out wget's 5 s timeout before the next.
	err = wait.PollUntilContextTimeout(t.Context(), 6*time.Second, 66*time.Second, true, func(context.Context) (bool, error) {
		if strings.Contains(con.output(), want) {
			return true, nil
		}
		con.send(t, hairpin)
		return false, nil
	})
	if err != nil {
		t.Fatalf("the guest did not reach its own web server through its Service (%v); the console printed:\n%s", err, con.output())
	}
}

// readFromNode connects to addr from node's network namespace (where kube-proxy serves the
// node's Services), writes send and returns the first line answered.
func readFromNode(node, addr, send string) (string, error) {
	var said string
	err := testsupport.InNetns(node, func() error {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if send != "" {
			if _, err := io.WriteString(c, send); err != nil {
				return err
			}
		}
		b, err := io.ReadAll(io.LimitReader(bufio.NewReader(c), 64<<10))
		said = string(b)
		return err
	})
	return said, err
}
