package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestProbes: a Pod whose readiness probe fails is not Ready and gets no endpoint in its
// Service while a healthy one does; a failing liveness probe restarts the container.
func TestProbes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	pod := func(name, probe string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, labels: {app: probed}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: %s
    args: [netexec, --http-port=8080]
    ports: [{name: http, containerPort: 8080}]
%s
`, name, ns, agnhost, probe)
	}
	healthy := pod("healthy", `    readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1}`)
	unready := pod("unready", `    readinessProbe: {tcpSocket: {port: 9999}, periodSeconds: 1, failureThreshold: 1}`)
	dying := pod("dying", `    livenessProbe: {exec: {command: [sh, -c, "exit 1"]}, periodSeconds: 1, failureThreshold: 2}`)
	svc := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: probed, namespace: %s}
spec:
  selector: {app: probed}
  ports: [{port: 80, targetPort: 8080}]
`, ns)
	kubectl(t, "apply", "-f", manifestFile(t, healthy+"---\n"+unready+"---\n"+dying+"---\n"+svc))
	pods := waitPodsReady(t, ns, "healthy")

	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		slices, err := kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=probed"})
		if err != nil {
			return false, nil
		}
		ready := readyAddresses(slices.Items)
		last = fmt.Sprint(ready)
		unreadyPod, err := kube.CoreV1().Pods(ns).Get(ctx, "unready", metav1.GetOptions{})
		if err != nil || unreadyPod.Status.PodIP == "" || podReady(unreadyPod) {
			return false, nil
		}
		return ready[pods["healthy"].Status.PodIP] && !ready[unreadyPod.Status.PodIP], nil
	})
	if err != nil {
		t.Fatalf("want the healthy Pod's address ready and the unready one's not; ready addresses %s", last)
	}

	err = wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, "dying", metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1, nil
	})
	if err != nil {
		t.Fatalf("a container failing its liveness probe was not restarted")
	}
	// The node records events asynchronously: the restart may be seen before its events.
	eventuallyWithin(t, "the dying Pod's probe and kill events", 30*time.Second, func() error {
		events := kubectl(t, "-n", ns, "get", "events", "--field-selector", "involvedObject.name=dying")
		for _, want := range []string{"Unhealthy", "Liveness probe failed", "Killing"} {
			if !strings.Contains(events, want) {
				return fmt.Errorf("events of the dying Pod lack %q:\n%s", want, events)
			}
		}
		return nil
	})
}

func readyAddresses(slices []discoveryv1.EndpointSlice) map[string]bool {
	out := map[string]bool{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				for _, a := range ep.Addresses {
					out[a] = true
				}
			}
		}
	}
	return out
}
