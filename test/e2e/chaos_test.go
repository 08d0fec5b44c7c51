package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Fault injection (make chaos runs it long; make test briefly). CHAOS_SEED makes a run's choices
// repeatable (which step, which VM, which component; the timing of a real cluster is not);
// CHAOS_DURATION bounds the time faults are injected.
const (
	chaosSeedEnv     = "CHAOS_SEED"
	chaosDurationEnv = "CHAOS_DURATION"
	// chaosMaxVMs bounds the VMs alive at once (their guests start paused: no CPU).
	chaosMaxVMs = 4
	// chaosConverge is how long the installation has, after the last fault, to be whole again
	// and to have every VM as its run strategy asks.
	chaosConverge = 4 * time.Minute
	// transientLimit is the longest a VMI may stay in a transient phase once faults stopped.
	transientLimit = 60 * time.Second
)

// chaos is one fault-injection run: its random source, the VMs it made and what it did.
type chaos struct {
	t       *testing.T
	ns      string
	rng     *rand.Rand
	next    int      // the next VM's number
	live    []string // VMs that should be running
	deleted []string // VMs deleted (nothing of theirs may remain)
	// uncertain are VMs whose create or delete failed at the client (the API down): the
	// server may have carried it out; converge asks the server.
	uncertain []string
	targeted  map[string]bool // VMs whose launcher was killed: their guest may have restarted
	faults    map[string]int  // faults injected, by component
	errors    int             // API calls of the workload that failed (expected during faults)
	// migrations counts the migrations asked for; imports are the DataVolumes made, of image.
	migrations int
	imports    []string
	uploads    []*chaosUpload
	image      *chaosImage
}

// TestChaos creates, deletes and migrates VMs (runStrategy Always), imports DataVolumes and
// uploads into others (vireoctl image-upload, run again as a user would until it succeeds)
// while killing (SIGKILL), at random points, every component on their path: vireo-apiserver, vireo-controller, a node agent, a
// launcher, a node's containerd and kubelet, the cluster's etcd and kube-apiserver, and a
// vireo-etcd member. Then, with faults stopped: every component is back, every VM has a
// Running VMI within its convergence time and none is left in a transient phase, deleted VMs
// leave no VMI, Pod or QEMU process, every launcher Pod and QEMU process belongs to a running
// VMI, and the bystander guests that were running before the faults (never targeted) run in
// the same QEMU process; every migration ended, leaving one launcher Pod, and every
// DataVolume is Succeeded with exactly the image it imported or was sent, every upload ended
// with success (chaos_workload_test.go).
func TestChaos(t *testing.T) {
	seed, duration := chaosSettings(t)
	c := &chaos{t: t, ns: namespace(t), rng: rand.New(rand.NewPCG(seed, seed)), targeted: map[string]bool{}, faults: map[string]int{}}
	bystanders := c.startBystanders()
	c.serveChaosImage()
	t.Logf("chaos: seed %d (%s=%d repeats these choices), faults for %s", seed, chaosSeedEnv, seed, duration)
	// Uploads retry until the installation had its time to converge.
	uploadCtx, stopUploads := context.WithTimeout(t.Context(), duration+chaosConverge)
	t.Cleanup(func() { stopUploads(); c.uploadsEnded() })
	end := time.Now().Add(duration)
	for time.Now().Before(end) {
		c.step(uploadCtx)
		// The pace of the faults, drawn from the seed: not waiting for anything.
		pause := time.Duration(500+c.rng.IntN(2500)) * time.Millisecond
		select {
		case <-t.Context().Done():
			return
		case <-time.After(pause):
		}
	}
	t.Logf("chaos: faults %v; %d workload calls failed meanwhile; live VMs %v, deleted %v, uncertain %v; launchers killed of %v; %d migrations asked for; DataVolumes imported %v, uploaded %d",
		c.faults, c.errors, c.live, c.deleted, c.uncertain, slices.Sorted(maps.Keys(c.targeted)), c.migrations, c.imports, len(c.uploads))
	violations := c.converge(bystanders)
	total := 0
	for _, n := range c.faults {
		total += n
	}
	recordFigure("chaos_faults", float64(total), "faults", fmt.Sprintf("SIGKILLs injected in the chaos run (seed %d, faults for %s)", seed, duration))
	recordFigure("chaos_invariants_violated", float64(len(violations)), "violations", "after the faults: components, VMs, Pods, QEMU processes, bystander guests")
	if total == 0 {
		t.Error("no fault was injected: no component's process was found to kill")
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// chaosSettings reads CHAOS_SEED (default: the time) and CHAOS_DURATION (default 30s).
func chaosSettings(t *testing.T) (uint64, time.Duration) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(chaosSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", chaosSeedEnv, s)
		}
		seed = v
	}
	return seed, envDuration(t, chaosDurationEnv, 30*time.Second)
}

// envDuration is the duration the environment variable name gives, def when it is unset.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 10m", name, s)
	}
	return d
}

// bystander is a guest running before the faults, never targeted: it must not restart.
type bystander struct {
	name string
	uid  string
	qemu int
}

// startBystanders starts a VM on each node and waits until its guest runs.
func (c *chaos) startBystanders() []bystander {
	var out []bystander
	for i, node := range cluster.NodeNames() {
		name := fmt.Sprintf("bystander-%d", i)
		c.createVM(name, node)
		vmi := waitPhase(c.t, c.ns, name, v1.Running, 2*time.Minute)
		qemu, _ := guestProcesses(c.t, c.ns, name, string(vmi.UID))
		if len(qemu) != 1 {
			c.t.Fatalf("QEMU processes of %s: %v, want one", name, qemu)
		}
		out = append(out, bystander{name: name, uid: string(vmi.UID), qemu: qemu[0]})
	}
	return out
}

// step does one thing, chosen by the seed: create a VM, delete one, migrate one, import a
// DataVolume, start an upload (retried until uploads ends), or kill a component.
func (c *chaos) step(uploads context.Context) {
	switch r := c.rng.IntN(10); {
	case r < 3 && len(c.live) < chaosMaxVMs:
		c.next++
		name := fmt.Sprintf("vm-%d", c.next)
		if c.tryCreateVM(name) {
			c.live = append(c.live, name)
		}
	case r < 4 && len(c.live) > 0:
		c.deleteVM()
	case r < 5 && len(c.live) > 0:
		c.migrate()
	case r < 6 && len(c.imports) < chaosMaxImports:
		c.importDataVolume()
	case r < 7 && len(c.uploads) < chaosMaxUploads:
		c.upload(uploads)
	default:
		c.kill()
	}
}

// deleteVM deletes one of the live VMs.
func (c *chaos) deleteVM() {
	name := c.live[c.rng.IntN(len(c.live))]
	c.live = slices.DeleteFunc(c.live, func(s string) bool { return s == name })
	if _, _, err := kubectlResult("-n", c.ns, "delete", "vm", name, "--wait=false"); err != nil {
		c.errors++
		c.uncertain = append(c.uncertain, name)
		return
	}
	c.deleted = append(c.deleted, name)
}

// chaosTargets are the components a fault may hit.
var chaosTargets = []string{"vireo-apiserver", "vireo-controller", "vireo-nodeagent", "launcher",
	"containerd", "kubelet", "etcd", "kube-apiserver", "vireo-etcd"}

// kill kills one process of a component chosen by the seed (SIGKILL). A process that cannot be
// found now (restarting after an earlier fault) is skipped.
func (c *chaos) kill() {
	target := chaosTargets[c.rng.IntN(len(chaosTargets))]
	node := c.rng.IntN(len(cluster.NodeNames()))
	pick := c.rng.IntN(1 << 20)
	pid, what := c.processOf(target, node, pick)
	if pid == 0 {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return
	}
	c.faults[target]++
	c.t.Logf("chaos: killed %s (pid %d)", what, pid)
}

// processOf finds the process of target: on node (for per-node components), the pick-th
// candidate where there are several.
func (c *chaos) processOf(target string, node, pick int) (int, string) {
	switch target {
	case "vireo-apiserver", "vireo-controller":
		pods := c.readyPods("app.kubernetes.io/name=" + target)
		if len(pods) == 0 {
			return 0, ""
		}
		p := pods[pick%len(pods)]
		if pids := podProcessIDs(c.t, p.Name); len(pids) == 1 {
			return pids[0], target + " " + p.Name
		}
	case "vireo-nodeagent":
		for _, p := range c.readyPods("app.kubernetes.io/name=vireo-nodeagent") {
			if p.Spec.NodeName == cluster.NodeNames()[node] {
				return containerPID(p, nodeAgentContainer), "the node agent of " + p.Spec.NodeName
			}
		}
	case "launcher":
		if len(c.live) == 0 {
			return 0, ""
		}
		name := c.live[pick%len(c.live)]
		vmi, err := vireo.KubevirtV1().VirtualMachineInstances(c.ns).Get(c.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return 0, ""
		}
		if _, launcher := guestProcesses(c.t, c.ns, name, string(vmi.UID)); len(launcher) == 1 {
			c.targeted[name] = true
			return launcher[0], "the launcher of " + name
		}
	default:
		return hostProcess(target, node, pick)
	}
	return 0, ""
}

// hostProcess is the pid of a host component vireo-local supervises: a node's containerd or
// kubelet, etcd, kube-apiserver or a vireo-etcd member.
func hostProcess(target string, node, pick int) (int, string) {
	name := target
	switch target {
	case "containerd":
		name = "containerd-" + strconv.Itoa(node)
	case "kubelet":
		name = cluster.NodeNames()[node]
	case "vireo-etcd":
		name = "vireo-etcd-" + strconv.Itoa(pick%3)
	}
	st, err := cluster.ComponentStatus(name)
	if err != nil || !st.Running {
		return 0, ""
	}
	return st.PID, name
}

// containerPID is the first process of a running container of pod (init containers included),
// found on the host through the container's cgroup under its node's cgroup root; 0 when there
// is none.
func containerPID(pod corev1.Pod, container string) int {
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if cs.Name == container && cs.State.Running != nil {
			id := strings.TrimPrefix(cs.ContainerID, "containerd://")
			if pids := cgroupProcesses(pod.Spec.NodeName, id); len(pids) > 0 {
				return pids[0]
			}
		}
	}
	return 0
}

// readyPods are the ready Pods of vireo-system with the label selector (none when the API
// does not answer).
func (c *chaos) readyPods(selector string) []corev1.Pod {
	pods, err := kube.CoreV1().Pods(v1.InstallNamespace).List(c.t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		c.errors++
		return nil
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			out = append(out, p)
		}
	}
	return out
}

// chaosVM is a VM of the tiny guest, started paused (no CPU), kept running; on node when given.
func chaosVM(name, node string) string {
	selector := ""
	if node != "" {
		selector = "      nodeSelector: {kubernetes.io/hostname: " + node + "}\n"
	}
	return fmt.Sprintf(`apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: %s}
spec:
  runStrategy: Always
  template:
    spec:
      startStrategy: Paused
      terminationGracePeriodSeconds: 0
%s      domain:
        memory: {guest: 64Mi}
        devices: {}
      volumes:
        - name: root
          containerDisk: {image: %s/vireo/tiny-containerdisk:latest}
`, name, selector, cluster.RegistryAddress())
}

func (c *chaos) createVM(name, node string) {
	kubectl(c.t, "-n", c.ns, "apply", "-f", manifestFile(c.t, chaosVM(name, node)))
}

// tryCreateVM creates a VM during the faults; a failure (the API down) is counted, not fatal.
func (c *chaos) tryCreateVM(name string) bool {
	if _, _, err := kubectlResult("-n", c.ns, "apply", "-f", manifestFile(c.t, chaosVM(name, ""))); err != nil {
		c.errors++
		c.uncertain = append(c.uncertain, name)
		return false
	}
	return true
}

// converge waits, faults stopped, until the installation is whole and every VM is as its run
// strategy asks, and returns the invariants still violated then.
func (c *chaos) converge(bystanders []bystander) []string {
	start := time.Now()
	var violations []string
	_ = wait.PollUntilContextTimeout(c.t.Context(), time.Second, chaosConverge, true, func(context.Context) (bool, error) {
		violations = c.violations(bystanders)
		return len(violations) == 0, nil
	})
	c.t.Logf("chaos: converged in %s (or gave up)", time.Since(start).Round(time.Second))
	// A VMI that took longer than transientLimit to leave a transient phase is one too.
	return append(violations, c.slowVMIs()...)
}

// violations are the invariants that do not hold now.
func (c *chaos) violations(bystanders []bystander) []string {
	var out []string
	if err := cluster.WaitForAPIServices(c.t.Context(), time.Second); err != nil {
		return []string{"Vireo's APIServices not Available: " + err.Error()}
	}
	for name, want := range map[string]int{"vireo-apiserver": 2, "vireo-controller": 2, "vireo-nodeagent": len(cluster.NodeNames())} {
		if n := len(c.readyPods("app.kubernetes.io/name=" + name)); n != want {
			out = append(out, fmt.Sprintf("%d ready %s Pods, want %d", n, name, want))
		}
	}
	vmis, err := vireo.KubevirtV1().VirtualMachineInstances(c.ns).List(c.t.Context(), metav1.ListOptions{})
	if err != nil {
		return append(out, "listing VMIs: "+err.Error())
	}
	running := map[string]v1.VirtualMachineInstance{}
	for _, vmi := range vmis.Items {
		if vmi.Status.Phase == v1.Running && vmi.DeletionTimestamp == nil {
			running[vmi.Name] = vmi
		}
	}
	want := slices.Clone(c.live)
	for _, b := range bystanders {
		want = append(want, b.name)
	}
	for _, name := range c.uncertain {
		if vm, err := vireo.KubevirtV1().VirtualMachines(c.ns).Get(c.t.Context(), name, metav1.GetOptions{}); err == nil && vm.DeletionTimestamp == nil {
			want = append(want, name)
		}
	}
	for _, name := range want {
		if _, ok := running[name]; !ok {
			out = append(out, fmt.Sprintf("VM %s has no Running VMI", name))
		}
	}
	for _, vmi := range vmis.Items {
		if !slices.Contains(want, vmi.Name) {
			out = append(out, fmt.Sprintf("VMI %s (%s) of a deleted VM is still there", vmi.Name, vmi.Status.Phase))
		}
	}
	out = append(out, c.workloadViolations(running)...)
	return append(out, c.leftovers(running, bystanders)...)
}

// leftovers checks launcher Pods and QEMU processes against the running VMIs, and the
// bystanders' QEMU processes.
func (c *chaos) leftovers(running map[string]v1.VirtualMachineInstance, bystanders []bystander) []string {
	var out []string
	pods, err := kube.CoreV1().Pods(c.ns).List(c.t.Context(), metav1.ListOptions{LabelSelector: v1.AppLabel + "=" + v1.LauncherApp})
	if err != nil {
		return append(out, "listing launcher Pods: "+err.Error())
	}
	uids := map[string]bool{}
	for _, vmi := range running {
		uids[string(vmi.UID)] = true
	}
	for _, p := range pods.Items {
		if !uids[p.Labels[v1.CreatedByLabel]] {
			out = append(out, fmt.Sprintf("launcher Pod %s (%s) belongs to no running VMI", p.Name, p.Status.Phase))
		}
	}
	for name, vmi := range running {
		if qemu, _ := guestProcesses(c.t, c.ns, name, string(vmi.UID)); len(qemu) != 1 {
			out = append(out, fmt.Sprintf("VMI %s runs %d QEMU processes, want 1", name, len(qemu)))
		}
	}
	if n := len(processes(c.t, func(cmdline, _ string) bool {
		return strings.Contains(cmdline, "qemu-system") && strings.Contains(cmdline, "guest="+c.ns+"_")
	})); n != len(running) {
		out = append(out, fmt.Sprintf("%d QEMU processes of the namespace, %d running VMIs", n, len(running)))
	}
	for _, b := range bystanders {
		vmi, ok := running[b.name]
		qemu, _ := guestProcesses(c.t, c.ns, b.name, b.uid)
		if !ok || string(vmi.UID) != b.uid || len(qemu) != 1 || qemu[0] != b.qemu {
			out = append(out, fmt.Sprintf("bystander %s restarted: VMI %s, QEMU %v; before VMI %s, QEMU %d", b.name, vmi.UID, qemu, b.uid, b.qemu))
		}
	}
	return out
}

// slowVMIs are the VMIs still in a transient phase (Pending, Scheduling, Scheduled) that they
// entered more than transientLimit ago.
func (c *chaos) slowVMIs() []string {
	vmis, err := vireo.KubevirtV1().VirtualMachineInstances(c.ns).List(c.t.Context(), metav1.ListOptions{})
	if err != nil {
		return []string{"listing VMIs: " + err.Error()}
	}
	var out []string
	for _, vmi := range vmis.Items {
		switch vmi.Status.Phase {
		case v1.Running, v1.Succeeded, v1.Failed:
			continue
		}
		since := vmi.CreationTimestamp.Time
		for _, tr := range vmi.Status.PhaseTransitionTimestamps {
			if tr.Phase == vmi.Status.Phase {
				since = tr.PhaseTransitionTimestamp.Time
			}
		}
		if d := time.Since(since); d > transientLimit {
			out = append(out, fmt.Sprintf("VMI %s in phase %q for %s", vmi.Name, vmi.Status.Phase, d.Round(time.Second)))
		}
	}
	return out
}
