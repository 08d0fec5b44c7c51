package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// TestVMIRunsAGuest: the tiny example boots under QEMU on a local node, in a namespace that
// enforces Pod Security baseline, is reported as KubeVirt reports it, serves HTTP at its
// address, survives a restart of its node agent, and shuts down cleanly when deleted, leaving
// nothing behind.
func TestVMIRunsAGuest(t *testing.T) {
	// A tenant namespace as most clusters have them: its launcher Pod must pass Pod Security
	// baseline (no hostPath), or kube-apiserver refuses it and the VMI never runs.
	ns := baselineNamespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	con := openConsole(t, ns, "tiny")
	con.waitFor(t, guestMarker, 90*time.Second)
	vmi := waitVMI(t, ns, "tiny", 30*time.Second, "Running and Ready", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && condition(v, v1.VirtualMachineInstanceReady) == v1.ConditionTrue
	})
	pod := kubectl(t, "-n", ns, "get", "pods", "-l", "kubevirt.io/created-by="+string(vmi.UID), "-o", "jsonpath={.items[0].status.podIP} {.items[0].spec.nodeName}")
	row := strings.Fields(strings.SplitN(kubectl(t, "-n", ns, "get", "vmi", "tiny", "--no-headers"), "\n", 2)[0])
	if len(row) < 6 || row[2] != "Running" || row[3]+" "+row[4] != pod || row[5] != "True" {
		t.Errorf("kubectl get vmi: %v, want Running, the Pod's IP and node (%s), READY True", row, pod)
	}
	if condition(vmi, v1.VirtualMachineInstanceSoftwareEmulation) != v1.ConditionTrue || len(vmi.Status.Interfaces) != 1 || vmi.Status.Interfaces[0].MAC == "" {
		t.Errorf("status: conditions %+v, interfaces %+v", vmi.Status.Conditions, vmi.Status.Interfaces)
	}
	if body := httpGet(t, "http://"+vmi.Status.Interfaces[0].IP+"/"); !strings.Contains(body, "vireo-tiny-guest") {
		t.Errorf("the guest's web server answered %q", body)
	}
	con.send(t, "echo $((6*7))")
	con.waitFor(t, "42", 10*time.Second)
	checkCapabilitiesSeeded(t, vmi)

	// The node agent restarts; the VMI's phase does not change, and the agent takes it up again.
	transitions := len(vmi.Status.PhaseTransitionTimestamps)
	killNodeAgent(t, vmi.Status.NodeName)
	if got := waitPhase(t, ns, "tiny", v1.Running, 5*time.Second); len(got.Status.PhaseTransitionTimestamps) != transitions {
		t.Errorf("phase transitions after the node agent restart: %+v", got.Status.PhaseTransitionTimestamps)
	}

	// Deleted: ACPI shutdown, Succeeded (reported by the restarted agent), Pod and finalizer gone.
	phases := watchPhases(t, ns, "tiny")
	qemu, launcher := guestProcesses(t, ns, "tiny", string(vmi.UID))
	if len(qemu) != 1 || len(launcher) != 1 {
		t.Fatalf("QEMU processes %v, launcher processes %v; want one each", qemu, launcher)
	}
	dir := launcherDir(vmi)
	kubectl(t, "-n", ns, "delete", "vmi", "tiny", "--timeout=60s")
	if got := <-phases; got != v1.Succeeded {
		t.Errorf("last phase before deletion = %q, want Succeeded", got)
	}
	if out := kubectl(t, "-n", ns, "get", "pods", "-o", "name"); out != "" {
		t.Errorf("pods left: %s", out)
	}
	eventually(t, "no process, socket or directory of the VMI left", func() error {
		qemu, launcher := guestProcesses(t, ns, "tiny", string(vmi.UID))
		if len(qemu)+len(launcher) > 0 {
			return fmt.Errorf("processes left: QEMU %v, launcher %v", qemu, launcher)
		}
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			return fmt.Errorf("launcher directory %s still there (%v)", dir, err)
		}
		return nil
	})
}

// TestVMIVolumesSideBySide: a cloud-init NoCloud VMI runs its user-data, and a VMI booting from
// a PVC's disk.img runs next to it on the same node.
func TestVMIVolumesSideBySide(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	node := cluster.NodeNames()[1]
	pin := func(m string) string {
		return strings.ReplaceAll(m, "spec:\n  terminationGracePeriodSeconds: 10\n", "spec:\n  terminationGracePeriodSeconds: 10\n  nodeSelector: {kubernetes.io/hostname: "+node+"}\n")
	}
	applyExample(t, ns, "vmi-nocloud.yaml", pin)
	// The claim first, then its disk, then the VMI.
	pvcOnly := func(m string) string { return strings.SplitN(m, "\n---\n", 2)[0] }
	vmiOnly := func(m string) string { return pin(strings.SplitN(m, "\n---\n", 2)[1]) }
	applyExample(t, ns, "vmi-pvc.yaml", pvcOnly)
	writeClaimDisk(t, ns, "tiny-disk")
	applyExample(t, ns, "vmi-pvc.yaml", vmiOnly)

	nocloud := openConsole(t, ns, "nocloud")
	pvc := openConsole(t, ns, "pvc")
	nocloud.waitFor(t, "USERDATA-RAN on nocloud", 120*time.Second)
	pvc.waitFor(t, guestMarker, 120*time.Second)
	for _, name := range []string{"nocloud", "pvc"} {
		if vmi := waitPhase(t, ns, name, v1.Running, 30*time.Second); vmi.Status.NodeName != node {
			t.Errorf("%s runs on %s, want %s", name, vmi.Status.NodeName, node)
		}
	}
	// The guest powers itself off: Succeeded.
	pvc.send(t, "poweroff -f")
	if vmi := waitPhase(t, ns, "pvc", v1.Succeeded, 30*time.Second); vmi.Status.Reason != "GuestShutdown" {
		t.Errorf("reason = %q, want GuestShutdown", vmi.Status.Reason)
	}
	if vmi := waitPhase(t, ns, "nocloud", v1.Running, time.Second); vmi.DeletionTimestamp != nil {
		t.Error("the other VMI was touched")
	}
}

// writeClaimDisk copies the test guest's raw disk into a bound claim's volume as disk.img.
func writeClaimDisk(t *testing.T, ns, claim string) {
	t.Helper()
	dir := claimDir(t, ns, claim)
	data, err := os.ReadFile(filepath.Join(repo, "_output", "images", "tiny", "disk.raw"))
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(disk, data, 0o660); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(disk, 107, 107); err != nil {
		t.Fatal(err)
	}
}

// TestVMIFailures: QEMU killed, launcher killed, launcher Pod deleted: each VMI fails with a
// reason, and the others keep running.
func TestVMIFailures(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	names := []string{"crash", "lkill", "podgone"}
	for _, name := range names {
		applyExample(t, ns, "vmi-tiny.yaml", func(m string) string { return strings.Replace(m, "name: tiny\n", "name: "+name+"\n", 1) })
	}
	vmis := map[string]*v1.VirtualMachineInstance{}
	for _, name := range names {
		vmis[name] = waitPhase(t, ns, name, v1.Running, 90*time.Second)
	}

	qemu, _ := guestProcesses(t, ns, "crash", string(vmis["crash"].UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU of crash: %v", qemu)
	}
	if err := syscall.Kill(qemu[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if vmi := waitPhase(t, ns, "crash", v1.Failed, 10*time.Second); vmi.Status.Reason != "QEMUCrashed" {
		t.Errorf("QEMU killed: reason %q, want QEMUCrashed", vmi.Status.Reason)
	}

	_, launcher := guestProcesses(t, ns, "lkill", string(vmis["lkill"].UID))
	if len(launcher) != 1 {
		t.Fatalf("launcher of lkill: %v", launcher)
	}
	if err := syscall.Kill(launcher[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, ns, "lkill", v1.Failed, 30*time.Second)

	kubectl(t, "-n", ns, "delete", "pod", "-l", "kubevirt.io/created-by="+string(vmis["podgone"].UID), "--wait=false")
	if vmi := waitPhase(t, ns, "podgone", v1.Failed, 60*time.Second); vmi.Status.Reason != "LauncherPodDeleted" {
		t.Errorf("launcher Pod deleted: reason %q, want LauncherPodDeleted", vmi.Status.Reason)
	}
}

// TestVMIBadInput: what cannot run says why, on the VMI.
func TestVMIBadInput(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	rename := func(name string, more ...[2]string) func(string) string {
		return func(m string) string {
			m = strings.Replace(m, "name: tiny\n", "name: "+name+"\n", 1)
			for _, r := range more {
				m = strings.Replace(m, r[0], r[1], 1)
			}
			return m
		}
	}
	applyExample(t, ns, "vmi-tiny.yaml", rename("unpullable", [2]string{"vireo/tiny-containerdisk:latest", "vireo/no-such-image:1"}))
	applyExample(t, ns, "vmi-tiny.yaml", rename("unschedulable", [2]string{"  terminationGracePeriodSeconds: 10\n", "  terminationGracePeriodSeconds: 10\n  nodeSelector: {kubernetes.io/hostname: no-such-node}\n"}))
	applyExample(t, ns, "vmi-tiny.yaml", rename("toobig", [2]string{"memory: 128Mi", "memory: 500Gi"}))
	applyExample(t, ns, "vmi-pvc.yaml", func(m string) string { return strings.SplitN(m, "\n---\n", 2)[1] })

	waitVMI(t, ns, "unpullable", 60*time.Second, "Synchronized False naming the image", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceSynchronized)
		return c != nil && (c.Reason == "ErrImagePull" || c.Reason == "ImagePullBackOff") && strings.Contains(c.Message, "no-such-image")
	})
	for name, want := range map[string]string{"unschedulable": "node affinity", "toobig": "Insufficient memory", "pvc": "tiny-disk"} {
		waitVMI(t, ns, name, 60*time.Second, "PodScheduled False saying "+want, func(v *v1.VirtualMachineInstance) bool {
			c := conditionOf(v, v1.VirtualMachineInstancePodScheduled)
			return v.Status.Phase == v1.Scheduling && c != nil && c.Status == v1.ConditionFalse && strings.Contains(c.Message, want)
		})
	}
	// Nothing else broke: they all delete cleanly.
	kubectl(t, "-n", ns, "delete", "vmi", "--all", "--timeout=60s")
}

func conditionOf(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) *v1.VirtualMachineInstanceCondition {
	return vmi.Status.Condition(t)
}

func condition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) v1.ConditionStatus {
	if c := conditionOf(vmi, t); c != nil {
		return c.Status
	}
	return ""
}

// watchPhases watches a VMI and sends the last phase it had once it is deleted.
func watchPhases(t *testing.T, ns, name string) <-chan v1.VirtualMachineInstancePhase {
	t.Helper()
	w, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan v1.VirtualMachineInstancePhase, 1)
	go func() {
		defer w.Stop()
		var last v1.VirtualMachineInstancePhase
		for ev := range w.ResultChan() {
			if vmi, ok := ev.Object.(*v1.VirtualMachineInstance); ok {
				last = vmi.Status.Phase
			}
			if ev.Type == watch.Deleted {
				break
			}
		}
		out <- last
	}()
	return out
}

// killNodeAgent kills the node agent of a node (its container, not the network helper's) and
// waits until it is back and Ready.
func killNodeAgent(t *testing.T, node string) {
	t.Helper()
	find := func() *corev1.Pod {
		pods, err := kube.CoreV1().Pods("vireo-system").List(t.Context(), metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + node})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("node agent Pods on %s: %v (%v)", node, pods, err)
		}
		return &pods.Items[0]
	}
	before := find()
	if err := syscall.Kill(containerProcess(t, before, nodeAgentContainer), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarts := func(p *corev1.Pod) int32 {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == nodeAgentContainer {
				return cs.RestartCount
			}
		}
		t.Fatalf("Pod %s has no container %s", p.Name, nodeAgentContainer)
		return 0
	}
	eventually(t, "the node agent restarted and Ready", func() error {
		after := find()
		if restarts(after) <= restarts(before) || !podReady(after) {
			return fmt.Errorf("restarts %d, ready %v", restarts(after), podReady(after))
		}
		return nil
	})
}

// nodeAgentContainer is the node agent's container in its Pod (the other is network-helper).
const nodeAgentContainer = "vireo-nodeagent"

// TestNodeAgentsChangeOnlyTheirNodesVMIs: a node agent's identity (its Pod-bound token) may
// write the status of its own node's VMIs only.
func TestNodeAgentsChangeOnlyTheirNodesVMIs(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	nodes := cluster.NodeNames()
	for i, node := range nodes {
		applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
			m = strings.Replace(m, "name: tiny\n", fmt.Sprintf("name: on-%d\n", i), 1)
			// Started paused: the guests take no CPU.
			return strings.Replace(m, "  terminationGracePeriodSeconds: 10\n", "  terminationGracePeriodSeconds: 10\n  startStrategy: Paused\n  nodeSelector: {kubernetes.io/hostname: "+node+"}\n", 1)
		})
	}
	for i := range nodes {
		waitPhase(t, ns, fmt.Sprintf("on-%d", i), v1.Running, 60*time.Second)
	}
	pods, err := kube.CoreV1().Pods("vireo-system").List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + nodes[0]})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("node agent of %s: %v %v", nodes[0], pods, err)
	}
	token := strings.TrimSpace(kubectl(t, "-n", "vireo-system", "create", "token", "vireo-nodeagent",
		"--bound-object-kind=Pod", "--bound-object-name="+pods.Items[0].Name, "--bound-object-uid="+string(pods.Items[0].UID)))
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = token
	agent, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "may not change a VMI of node"} {
		// The real node agents write these VMIs' status too: a conflict is read again and retried.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			// It reads VMIs as its informer does (list, no get: its ServiceAccount has no more).
			list, err := agent.KubevirtV1().VirtualMachineInstances(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + fmt.Sprintf("on-%d", i)})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("the node agent lists VMIs: %v (%d)", err, len(list.Items))
			}
			vmi := &list.Items[0]
			vmi.Status.Reason = "Probe"
			_, err = agent.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{})
			return err
		})
		switch {
		case want == "" && err != nil:
			t.Errorf("the node agent of %s may not write its own VMI: %v", nodes[0], err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("the node agent of %s wrote a VMI of %s: err %v", nodes[0], nodes[i], err)
		}
	}
}

// TestVMIShutdownDeadline: a guest that ignores the ACPI power button is destroyed at the end of
// its grace period, and a restart of the node agent in between neither resets nor loses the
// deadline.
func TestVMIShutdownDeadline(t *testing.T) {
	const grace = 25
	ns := namespace(t)
	con, vmi := bootTiny(t, ns, "deaf", grace)
	con.send(t, "killall acpid; echo ACPID-$((40+2))-GONE")
	con.waitFor(t, "ACPID-42-GONE", 10*time.Second)
	qemu, _ := guestProcesses(t, ns, "deaf", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes %v, want one", qemu)
	}

	deleted := time.Now()
	kubectl(t, "-n", ns, "delete", "vmi", "deaf", "--wait=false")
	var podUID string
	for uid := range vmi.Status.ActivePods {
		podUID = string(uid)
	}
	deadlineFile := filepath.Join(cluster.Options().NodeDir(vmi.Status.NodeName), "host", "var", "run", "vireo", "agent", podUID+".deadline")
	var before []byte
	eventually(t, "the node agent recorded the shutdown deadline", func() (err error) {
		before, err = os.ReadFile(deadlineFile)
		return err
	})
	killNodeAgent(t, vmi.Status.NodeName)
	if syscall.Kill(qemu[0], 0) != nil {
		t.Fatalf("QEMU ended %s after the delete: the guest was meant to ignore ACPI until the deadline", time.Since(deleted))
	}
	if after, err := os.ReadFile(deadlineFile); err != nil || string(after) != string(before) {
		t.Errorf("deadline after the node agent restarted: %q (%v), want %q kept", after, err, before)
	}
	eventuallyWithin(t, "QEMU destroyed at the deadline", (grace+20)*time.Second, func() error {
		if syscall.Kill(qemu[0], 0) == nil {
			return fmt.Errorf("QEMU %d still running %s after the delete", qemu[0], time.Since(deleted).Round(time.Second))
		}
		return nil
	})
	if took := time.Since(deleted); took < (grace-3)*time.Second {
		t.Errorf("QEMU ended %s after the delete, before the %d s grace period: not by the deadline", took, grace)
	}
	eventually(t, "the VMI and its deadline gone", func() error {
		if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), "deaf", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("VMI still there")
		}
		if _, err := os.Stat(deadlineFile); !os.IsNotExist(err) {
			return fmt.Errorf("deadline file %s still there (%v)", deadlineFile, err)
		}
		return nil
	})
}

// checkCapabilitiesSeeded: the VMI's node holds the QEMU capabilities its node agent's init
// container probed, and the launcher's libvirtd started its domain from them unchanged (a
// libvirtd that probed QEMU itself would have rewritten its copy).
func checkCapabilitiesSeeded(t *testing.T, vmi *v1.VirtualMachineInstance) {
	t.Helper()
	nodeDir := cluster.Options().NodeDir(vmi.Status.NodeName)
	seeds, err := filepath.Glob(filepath.Join(nodeDir, "host", "var", "lib", "vireo", "capabilities", "*.xml"))
	if err != nil || len(seeds) != 1 {
		t.Errorf("capabilities seed on %s: %v (%v), want one file", vmi.Status.NodeName, seeds, err)
		return
	}
	seed, err := os.ReadFile(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	for podUID := range vmi.Status.ActivePods {
		// The Pod's emptyDir "private", where the kubelet keeps it.
		private := filepath.Join(nodeDir, "kubelet", "pods", string(podUID), "volumes", "kubernetes.io~empty-dir", "private")
		copied, err := os.ReadFile(filepath.Join(private, "cache", "libvirt", "qemu", "cache", "capabilities", filepath.Base(seeds[0])))
		if err != nil || string(copied) != string(seed) {
			t.Errorf("the launcher's libvirt capabilities differ from the node's seed (%v): it probed QEMU itself", err)
		}
	}
}

// bootTiny creates the tiny example as VMI name with grace seconds of termination grace period
// and returns its console once the guest booted, and the VMI Running.
func bootTiny(t *testing.T, ns, name string, grace int) (*console, *v1.VirtualMachineInstance) {
	t.Helper()
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		m = strings.Replace(m, "name: tiny\n", "name: "+name+"\n", 1)
		return strings.Replace(m, "terminationGracePeriodSeconds: 10\n", fmt.Sprintf("terminationGracePeriodSeconds: %d\n", grace), 1)
	})
	con := openConsole(t, ns, name)
	con.waitFor(t, guestMarker, 90*time.Second)
	return con, waitPhase(t, ns, name, v1.Running, 30*time.Second)
}

// TestVMIShutdownPressesAgain: a guest that does not hear the first ACPI power button press
// (its acpid not yet running, as early in a boot) hears a later one: the launcher presses
// again while the guest runs, so the guest powers off and the VMI goes long before its grace
// period ends (KubeVirt presses once: such a guest waits out the whole grace period).
func TestVMIShutdownPressesAgain(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	con, _ := bootTiny(t, ns, "late", 600)
	// acpid comes back 20 s from now: the delete's first press reaches a guest not listening.
	con.send(t, "killall acpid; (sleep 20; acpid -l /var/log/acpid.log; echo ACPID-$((40+2))-BACK) & echo ACPID-$((40+2))-GONE")
	con.waitFor(t, "ACPID-42-GONE", 30*time.Second)
	deleted := time.Now()
	kubectl(t, "-n", ns, "delete", "vmi", "late", "--wait=false")
	eventuallyWithin(t, "the VMI gone once the guest heard a later press", 2*time.Minute, func() error {
		return vmiGone(t, ns, "late")
	})
	out := con.output()
	back, pressed := strings.Index(out, "ACPID-42-BACK"), strings.Index(out, "power button pressed")
	if back < 0 || pressed < back {
		t.Errorf("the guest did not power off on a press after its acpid came back (%s after the delete); console:\n%s",
			time.Since(deleted).Round(time.Second), out)
	}
}
