package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// agentDownEnv sets how long TestNodeAgentDownLeavesGuestsAlone keeps a node agent away
// (default 30s in make test; make chaos runs it for 10m).
const agentDownEnv = "AGENT_DOWN"

// TestNodeAgentDownLeavesGuestsAlone: a node's agent is gone (its DaemonSet no longer runs on
// the node) for AGENT_DOWN. Throughout, the node's VMI stays Running, the same VMI in the same
// QEMU process: Vireo leaves a guest alone while only its agent is missing. When the agent is
// back it takes the guest up again (an unpause goes through it).
func TestNodeAgentDownLeavesGuestsAlone(t *testing.T) {
	down := envDuration(t, agentDownEnv, 30*time.Second)
	ns := namespace(t)
	node := cluster.NodeNames()[1]
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, chaosVM("alone", node)))
	vmi := waitPhase(t, ns, "alone", v1.Running, 2*time.Minute)
	qemu, _ := guestProcesses(t, ns, "alone", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of the guest: %v, want one", qemu)
	}

	kubectl(t, "-n", v1.InstallNamespace, "patch", "daemonset", "vireo-nodeagent", "--type=json", "-p", fmt.Sprintf(
		`[{"op":"add","path":"/spec/template/spec/affinity","value":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"NotIn","values":[%q]}]}]}}}}]`, node))
	restore := func() {
		_, _, _ = kubectlResult("-n", v1.InstallNamespace, "patch", "daemonset", "vireo-nodeagent", "--type=json", "-p", `[{"op":"remove","path":"/spec/template/spec/affinity"}]`)
	}
	t.Cleanup(restore)
	eventuallyWithin(t, "no node agent on "+node, 2*time.Minute, func() error {
		if n := agentsOn(t, node); n > 0 {
			return fmt.Errorf("%d node agent Pods on %s", n, node)
		}
		return nil
	})
	gone := time.Now()
	// The check runs every 5 s for the whole time the agent is away.
	for time.Since(gone) < down {
		got, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "alone", metav1.GetOptions{})
		if err != nil || got.UID != vmi.UID || got.Status.Phase != v1.Running {
			t.Fatalf("%s after the agent left: VMI %v (err %v), want %s Running", time.Since(gone).Round(time.Second), got, err, vmi.UID)
		}
		if err := syscall.Kill(qemu[0], 0); err != nil {
			t.Fatalf("%s after the agent left, the guest's QEMU (pid %d) is gone", time.Since(gone).Round(time.Second), qemu[0])
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
	t.Logf("the node agent of %s was away %s; the guest ran on", node, time.Since(gone).Round(time.Second))
	recordFigure("agent_down_s", time.Since(gone).Seconds(), "s", "a node agent away this long; its node's guest ran on, the same VMI and QEMU process")

	restore()
	kubectl(t, "-n", v1.InstallNamespace, "rollout", "status", "daemonset/vireo-nodeagent", "--timeout=3m")
	waitNodeAgentReady(t, node)
	checkAdopted(t, ns, "alone", vmi.UID, qemu[0])
}

// agentsOn counts the node agent Pods on node, those terminating included.
func agentsOn(t *testing.T, node string) int {
	pods, err := kube.CoreV1().Pods(v1.InstallNamespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	return len(pods.Items)
}
