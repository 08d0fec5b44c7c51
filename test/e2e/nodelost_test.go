package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestNodeLostRestartsVMElsewhere: a node's kubelet stops for good (the node is gone, its guest
// cut off). Once the Node is NotReady past the launcher Pod's tolerations (5 s here, KubeVirt's
// and Kubernetes' default is 300 s), the taint manager evicts the Pod, the node never stops it,
// and the VMI fails NodeUnresponsive naming the node; its VM (runStrategy Always, disks only
// ephemeral) starts it again on the other node. When the kubelet comes back, it stops the
// old guest: one QEMU per VM is left.
func TestNodeLostRestartsVMElsewhere(t *testing.T) {
	ns := namespace(t)
	manifest := strings.Replace(chaosVM("lost", ""), "      terminationGracePeriodSeconds: 0\n", `      terminationGracePeriodSeconds: 0
      tolerations:
        - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
        - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
`, 1)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))
	first := waitPhase(t, ns, "lost", v1.Running, 2*time.Minute)
	node := first.Status.NodeName
	qemu, _ := guestProcesses(t, ns, "lost", string(first.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of the guest: %v, want one", qemu)
	}
	// The VM replaces a failed VMI at once: its Failed state is caught by a watch.
	failures := watchFailure(t, ns, "lost", first.UID)
	t.Cleanup(func() { restartKubelet(t, node) })
	if err := cluster.StopComponent(node); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()

	var failed *v1.VirtualMachineInstance
	select {
	case failed = <-failures:
	case <-time.After(4 * time.Minute):
		t.Fatalf("VMI %s did not fail within 4 minutes of the kubelet of %s stopping", first.UID, node)
	}
	if failed.Status.Reason != v1.ReasonNodeUnresponsive || !strings.Contains(readyMessage(failed), node) {
		t.Fatalf("VMI failed with %q (%q), want %s naming node %s", failed.Status.Reason, readyMessage(failed), v1.ReasonNodeUnresponsive, node)
	}
	t.Logf("the VMI failed %s after the kubelet of %s stopped: %s", time.Since(stopped).Round(time.Second), node, readyMessage(failed))
	again := waitVMI(t, ns, "lost", 3*time.Minute, "a new VMI Running on another node", func(v *v1.VirtualMachineInstance) bool {
		return v.UID != first.UID && v.Status.Phase == v1.Running
	})
	if again.Status.NodeName == node {
		t.Errorf("the new VMI runs on %s, the node that is gone", node)
	}
	recordFigure("node_lost_to_running_elsewhere_s", time.Since(stopped).Seconds(), "s",
		"a node's kubelet stopped -> its VM Running on another node (launcher Pod tolerations 5 s)")

	restartKubelet(t, node)
	eventuallyWithin(t, "the old guest stopped by its returning node", 2*time.Minute, func() error {
		if err := syscall.Kill(qemu[0], 0); err == nil {
			return fmt.Errorf("the old QEMU (pid %d) still runs on %s", qemu[0], node)
		}
		return nil
	})
}

// restartKubelet starts node's kubelet if it is stopped and waits until the Node is Ready.
func restartKubelet(t *testing.T, node string) {
	if st, err := cluster.ComponentStatus(node); err == nil && st.Running {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cluster.StartComponent(ctx, node); err != nil {
		t.Errorf("starting the kubelet of %s again: %v", node, err)
		return
	}
	eventuallyWithin(t, "node "+node+" Ready again", 2*time.Minute, func() error {
		n, err := kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable || taint.Key == corev1.TaintNodeNotReady {
				return fmt.Errorf("node %s still has the taint %s", node, taint.Key)
			}
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready: %+v", node, n.Status.Conditions)
	})
	waitNodeAgentReady(t, node)
}

// waitNodeAgentReady waits until node has a ready node agent.
func waitNodeAgentReady(t *testing.T, node string) {
	t.Helper()
	eventuallyWithin(t, "the node agent of "+node+" ready", 3*time.Minute, func() error {
		for _, p := range vireoPods(t, "vireo-nodeagent") {
			if p.Spec.NodeName == node && podReady(&p) {
				return nil
			}
		}
		return fmt.Errorf("no ready node agent on %s", node)
	})
}

// watchFailure watches VMI ns/name and sends the first state of uid in phase Failed.
func watchFailure(t *testing.T, ns, name string, uid types.UID) <-chan *v1.VirtualMachineInstance {
	t.Helper()
	w, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan *v1.VirtualMachineInstance, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if v, ok := ev.Object.(*v1.VirtualMachineInstance); ok && v.UID == uid && v.Status.Phase == v1.Failed {
				out <- v
				return
			}
		}
	}()
	return out
}

// readyMessage is the message of the VMI's Ready condition.
func readyMessage(v *v1.VirtualMachineInstance) string {
	if c := conditionOf(v, v1.VirtualMachineInstanceReady); c != nil {
		return c.Message
	}
	return ""
}
