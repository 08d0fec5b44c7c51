package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// probedVMI is the test guest with a label a Service selects, its web server's port 80 and an
// unused port 81 forwarded, and the given probes (YAML at the spec's indentation).
const probedVMI = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: %s, labels: {group: probed}}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    resources: {requests: {memory: 128Mi}}
    devices:
      disks: [{name: containerdisk, disk: {bus: virtio}}]
      interfaces: [{name: default, masquerade: {}, ports: [{name: http, port: 80}, {port: 81}]}]
  networks: [{name: default, pod: {}}]
  volumes: [{name: containerdisk, containerDisk: {image: %s/vireo/tiny-containerdisk:latest}}]
%s`

// TestVMIProbes: KubeVirt's readiness and liveness probes. A guest whose exec readiness probe
// (run through the guest agent) passes is Ready and its address is a ready endpoint of a
// Service selecting it, and its guestAgentPing liveness probe keeps it running; a readiness
// probe on a port nothing listens on leaves the VMI Running but not Ready (not an endpoint); a
// failing exec liveness probe ends the VMI: Failed, LauncherTerminated.
func TestVMIProbes(t *testing.T) {
	ns := namespace(t)
	reg := cluster.RegistryAddress()
	healthy := fmt.Sprintf(probedVMI, "healthy", reg, `  readinessProbe:
    exec: {command: [cat, /www/index.html]}
    periodSeconds: 2
  livenessProbe:
    guestAgentPing: {}
    periodSeconds: 2
    failureThreshold: 30
`)
	unready := fmt.Sprintf(probedVMI, "unready", reg, `  readinessProbe:
    httpGet: {port: 81}
    periodSeconds: 2
`)
	dying := fmt.Sprintf(probedVMI, "dying", reg, `  readinessProbe:
    httpGet: {port: http}
    periodSeconds: 2
  livenessProbe:
    exec: {command: ["false"]}
    periodSeconds: 2
    failureThreshold: 1
`)
	svc := `apiVersion: v1
kind: Service
metadata: {name: probed}
spec:
  selector: {group: probed}
  ports: [{port: 80}]
`
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, healthy+"---\n"+unready+"---\n"+dying+"---\n"+svc))

	vmi := waitVMI(t, ns, "healthy", 3*time.Minute, "Ready through its exec readiness probe", func(v *v1.VirtualMachineInstance) bool {
		c := v.Status.Condition(v1.VirtualMachineInstanceReady)
		return v.Status.Phase == v1.Running && c != nil && c.Status == v1.ConditionTrue
	})
	healthyIP := vmi.Status.Interfaces[0].IP

	// The dying guest's liveness probe fails as soon as it runs: the kubelet stops the launcher.
	dead := waitVMI(t, ns, "dying", 3*time.Minute, "Failed by its liveness probe", func(v *v1.VirtualMachineInstance) bool { return v.Status.Phase == v1.Failed })
	if dead.Status.Reason != v1.ReasonLauncherTerminated {
		c := dead.Status.Condition(v1.VirtualMachineInstanceReady)
		t.Errorf("dying VMI ended with reason %q (%+v), want %s", dead.Status.Reason, c, v1.ReasonLauncherTerminated)
	}

	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, "unready", metav1.GetOptions{})
		if err != nil || u.Status.Phase != v1.Running || len(u.Status.Interfaces) == 0 {
			return false, nil
		}
		c := u.Status.Condition(v1.VirtualMachineInstanceReady)
		slices, err := kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=probed"})
		if err != nil || c == nil {
			return false, nil
		}
		ready := readyAddresses(slices.Items)
		last = fmt.Sprintf("unready VMI Ready=%s (%s); ready endpoints %v", c.Status, c.Reason, ready)
		return c.Status == v1.ConditionFalse && c.Reason == v1.ReasonPodNotReady && ready[healthyIP] && !ready[u.Status.Interfaces[0].IP], nil
	})
	if err != nil {
		t.Fatalf("want the healthy VMI a ready endpoint and the unready one Running, not Ready, not an endpoint: %s", last)
	}

	// The healthy guest's liveness probe keeps passing: it is still Running and Ready after
	// several of its periods (2 s), and its launcher was not stopped.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "healthy", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := v.Status.Condition(v1.VirtualMachineInstanceReady); v.Status.Phase != v1.Running || c == nil || c.Status != v1.ConditionTrue {
			t.Fatalf("healthy VMI became %s, Ready %+v", v.Status.Phase, c)
		}
		time.Sleep(time.Second) // observing that nothing changes over a window, not waiting for a change
	}
}
