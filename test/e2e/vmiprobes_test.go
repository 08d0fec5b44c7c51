package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
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
	t.Parallel()
	ns := namespace(t)
	reg := cluster.RegistryAddress()
	// The healthy guest's agent must answer within 180 s of its launcher's start (90 x 2 s):
	// with the tests in parallel a TCG guest took 70 s to bring its agent up, and at 30 x 2 s
	// its liveness probe killed it (CI).
	healthy := fmt.Sprintf(probedVMI, "healthy", reg, `  readinessProbe:
    exec: {command: [cat, /www/index.html]}
    periodSeconds: 2
  livenessProbe:
    guestAgentPing: {}
    periodSeconds: 2
    failureThreshold: 90
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

	// The healthy guest's liveness probe (guestAgentPing) passes, as the kubelet counts it, and
	// the VMI is still Running and Ready after it did.
	successes := func(probe string) (float64, error) {
		body, err := kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", vmi.Status.NodeName, "proxy/metrics/probes").DoRaw(t.Context())
		if err != nil {
			return 0, err
		}
		return probeSuccesses(string(body), ns, launcherpodapi.CurrentPodName(vmi), probe), nil
	}
	eventuallyWithin(t, "two successful liveness probes of the healthy VMI's launcher", 2*time.Minute, func() error {
		n, err := successes("Liveness")
		if err == nil && n < 2 {
			err = fmt.Errorf("%v successful liveness probes", n)
		}
		return err
	})
	v, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "healthy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Status.Condition(v1.VirtualMachineInstanceReady); v.Status.Phase != v1.Running || c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("healthy VMI is %s, Ready %+v, after its liveness probe passed", v.Status.Phase, c)
	}
}

// probeSuccesses reads the kubelet's prober_probe_total of the launcher container of pod for
// probe (Liveness, Readiness) with result successful, from its /metrics/probes text.
func probeSuccesses(metrics, namespace, pod, probe string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "prober_probe_total{") {
			continue
		}
		for _, want := range []string{`container="compute"`, `namespace="` + namespace + `"`, `pod="` + pod + `"`,
			`probe_type="` + probe + `"`, `result="successful"`} {
			if !strings.Contains(line, want) {
				line = ""
				break
			}
		}
		if fields := strings.Fields(line); len(fields) == 2 {
			n, _ := strconv.ParseFloat(fields[1], 64)
			return n
		}
	}
	return 0
}
