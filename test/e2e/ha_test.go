package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// controllerLease is vireo-controller's leader-election Lease; its holder's identity is the
// Pod's name (its hostname), an underscore and a per-process id.
const controllerLease = "vireo-controller"

// leaseHolder is the identity holding vireo-controller's Lease, and when it last renewed.
func leaseHolder(t *testing.T) (string, time.Time) {
	t.Helper()
	lease, err := kube.CoordinationV1().Leases(v1.InstallNamespace).Get(t.Context(), controllerLease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Lease %s: %v", controllerLease, err)
	}
	var holder string
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	var renewed time.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	return holder, renewed
}

// controllerLeader is the ready vireo-controller Pod that holds the Lease: the one whose
// controllers run (and fill the VM and VMI metrics).
func controllerLeader(t *testing.T) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "a vireo-controller leader", func() error {
		holder, renewed := leaseHolder(t)
		name, _, _ := strings.Cut(holder, "_")
		if time.Since(renewed) > 10*time.Second {
			return fmt.Errorf("Lease held by %q, last renewed %s", holder, renewed)
		}
		for _, p := range vireoPods(t, "vireo-controller") {
			if p.Name == name && podReady(&p) {
				pod = &p
				return nil
			}
		}
		return fmt.Errorf("Lease held by %q: no ready Pod of that name", holder)
	})
	return pod
}

// TestControllerLeaderKilledIsReplaced: vireo-controller's leader is killed (SIGKILL, so it
// cannot release its Lease); within 15 s another process holds the Lease, and a VMI created
// right after the kill gets its launcher Pod.
func TestControllerLeaderKilledIsReplaced(t *testing.T) {
	ns := namespace(t)
	leader := controllerLeader(t)
	before, _ := leaseHolder(t)
	pids := podProcessIDs(t, leader.Name)
	if len(pids) != 1 {
		t.Fatalf("leader Pod %s has processes %v, want one", leader.Name, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	vmi := vmiNamed("after-failover")
	vmi.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"} // nothing boots
	// An image the controller pins to its digest at once (vmiNamed's registry does not resolve).
	vmi.Spec.Volumes[0].ContainerDisk.Image = cluster.RegistryAddress() + "/vireo/tiny-containerdisk:latest"
	if _, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Create(t.Context(), vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var after string
	eventuallyWithin(t, "another vireo-controller holding the Lease", 20*time.Second, func() error {
		holder, renewed := leaseHolder(t)
		if holder == before || renewed.Before(killed) {
			return fmt.Errorf("Lease held by %q, renewed %s", holder, renewed)
		}
		after = holder
		return nil
	})
	takeover := time.Since(killed)
	if takeover > 15*time.Second {
		t.Errorf("the Lease changed hands %s after the leader was killed, want at most 15 s", takeover.Round(time.Millisecond))
	}
	waitVMI(t, ns, vmi.Name, 30*time.Second, "phase Scheduling (its launcher Pod made)", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Scheduling
	})
	// Every candidate had its caches filled before the Lease expired (the killed one's
	// container restarted within seconds): the new leader acts at once, not after listing.
	if lag := time.Since(killed) - takeover; lag > 5*time.Second {
		t.Errorf("the new leader made the launcher Pod %s after taking over, want it warm (at most 5 s)", lag.Round(time.Millisecond))
	}
	recordFigure("controller_failover_s", takeover.Seconds(), "s", "vireo-controller leader killed (SIGKILL) -> another process holds the Lease")
	recordFigure("controller_failover_to_reconcile_s", time.Since(killed).Seconds(), "s", "leader killed -> a VMI created meanwhile has its launcher Pod")
	t.Logf("leader %s killed; %s took over in %s; the VMI created meanwhile was Scheduling %s after the kill",
		before, after, takeover.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
}

// callLog records the outcome of repeated calls: when each began, how long it took, and its
// error.
type callLog struct {
	mu    sync.Mutex
	calls []call
}

type call struct {
	start, end time.Time
	err        error
}

func (l *callLog) record(start time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call{start: start, end: time.Now(), err: err})
}

// failed are the calls that failed.
func (l *callLog) failed() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []call
	for _, c := range l.calls {
		if c.err != nil {
			out = append(out, c)
		}
	}
	return out
}

// failures are the calls that failed, as messages.
func (l *callLog) failures() []string {
	var out []string
	for _, c := range l.failed() {
		out = append(out, c.start.Format("15:04:05.000")+": "+c.err.Error())
	}
	return out
}

// longestOutage is the longest time from the start of a failing call to the start of the next
// call that succeeded: how long a user retrying at once would have been without an answer.
func (l *callLog) longestOutage() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var longest time.Duration
	var down time.Time
	for _, c := range l.calls {
		switch {
		case c.err != nil && down.IsZero():
			down = c.start
		case c.err == nil && !down.IsZero():
			longest = max(longest, c.start.Sub(down))
			down = time.Time{}
		}
	}
	if !down.IsZero() {
		longest = max(longest, time.Since(down))
	}
	return longest
}

func (l *callLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// apiLoad is a client-go client creating and reading VMs and kubectl listing VMIs, each
// without pause, in namespace ns, until stop.
type apiLoad struct {
	ns            string
	writes, lists callLog
	created       []string // the VMs whose create was answered with success
	stop          context.CancelFunc
	wg            sync.WaitGroup
}

func startAPILoad(t *testing.T, ns string) *apiLoad {
	ctx, stop := context.WithCancel(t.Context())
	l := &apiLoad{ns: ns, stop: stop}
	l.wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			vm := haltedVM(fmt.Sprintf("vm-%d", i))
			start := time.Now()
			_, err := vireo.KubevirtV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
			if err == nil {
				l.created = append(l.created, vm.Name)
				_, err = vireo.KubevirtV1().VirtualMachines(ns).Get(ctx, vm.Name, metav1.GetOptions{})
			}
			if ctx.Err() == nil {
				l.writes.record(start, err)
			}
		}
	})
	l.wg.Go(func() {
		for ctx.Err() == nil {
			start := time.Now()
			_, stderr, err := kubectlResult("-n", ns, "get", "vmi", "-o", "name")
			if err != nil {
				err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr))
			}
			if ctx.Err() == nil {
				l.lists.record(start, err)
			}
		}
	})
	return l
}

// finish lets a few more kubectl calls run (with every replica back), stops the load and
// checks that every VM created is there; it returns the longest kubectl outage.
func (l *apiLoad) finish(t *testing.T) time.Duration {
	t.Helper()
	n := l.lists.len() + 5
	_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return l.lists.len() >= n, nil
	})
	l.stop()
	l.wg.Wait()
	outage := l.lists.longestOutage()
	t.Logf("%d client-go create+get pairs (%d failed), %d kubectl get vmi (%d failed); longest kubectl outage %s",
		l.writes.len(), len(l.writes.failures()), l.lists.len(), len(l.lists.failures()), outage.Round(time.Millisecond))
	// Every create answered with success is there (a create whose answer was lost may be too).
	list, err := vireo.KubevirtV1().VirtualMachines(l.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, vm := range list.Items {
		listed[vm.Name] = true
	}
	for _, name := range l.created {
		if !listed[name] {
			t.Errorf("VM %s was created (the server said so) but is not listed", name)
		}
	}
	return outage
}

// TestAPIServerRolloutRefusesNothing: a rolling restart of vireo-apiserver (each replica
// replaced in turn, the old one stopped with SIGTERM, as an upgrade does) while clients
// create, read and list without pause: no client-go request fails, no kubectl call either.
// A replica shutting down answers 429 with Retry-After (client-go retries it) while its
// endpoint is withdrawn.
func TestAPIServerRolloutRefusesNothing(t *testing.T) {
	load := startAPILoad(t, namespace(t))
	start := time.Now()
	kubectl(t, "-n", v1.InstallNamespace, "rollout", "restart", "deployment/vireo-apiserver")
	kubectl(t, "-n", v1.InstallNamespace, "rollout", "status", "deployment/vireo-apiserver", "--timeout=3m")
	t.Logf("vireo-apiserver rolled out in %s", time.Since(start).Round(time.Millisecond))
	load.finish(t)
	recordFigure("apiserver_rollout_refused", float64(len(load.writes.failures())+len(load.lists.failures())), "requests", "vireo-apiserver rolling restart under load: client-go and kubectl calls failed")
	recordFigure("apiserver_rollout_s", time.Since(start).Seconds(), "s", "vireo-apiserver rolling restart, both replicas")
	for name, log := range map[string]*callLog{"client-go create+get": &load.writes, "kubectl get vmi": &load.lists} {
		if f := log.failures(); len(f) > 0 {
			t.Errorf("%d of %d %s calls failed during the rollout:\n%s", len(f), log.len(), name, strings.Join(f, "\n"))
		}
	}
}

// TestAPIServerReplicaKilled: each vireo-apiserver replica in turn is killed (SIGKILL) while
// clients create, read and list without pause. kubectl is never without an answer for 2 s.
// Requests may fail only while kube-apiserver's aggregator still routes to the dead replica
// (until its node reports the container gone and the endpoint is withdrawn): the aggregator
// answers those 503 without Retry-After and does not try the other endpoint, so no client
// retries them. Those failures are counted and bounded: within 2 s of a kill.
func TestAPIServerReplicaKilled(t *testing.T) {
	load := startAPILoad(t, namespace(t))
	var kills []time.Time
	for _, pod := range vireoPods(t, "vireo-apiserver") {
		kills = append(kills, time.Now())
		killAndAwaitRestart(t, &pod)
		t.Logf("vireo-apiserver %s killed; restarted and Ready after %s", pod.Name, time.Since(kills[len(kills)-1]).Round(time.Millisecond))
	}
	d := load.finish(t)
	recordFigure("apiserver_kill_longest_gap_s", d.Seconds(), "s", "a vireo-apiserver replica killed (SIGKILL): longest time kubectl get vmi got no answer")
	recordFigure("apiserver_kill_failed_calls", float64(len(load.writes.failures())+len(load.lists.failures())), "requests", "two replicas killed in turn: calls answered 503 by the aggregator")
	if d > 2*time.Second {
		t.Errorf("kubectl get vmi failed for %s in a row, want at most 2 s; failures:\n%s", d.Round(time.Millisecond), strings.Join(load.lists.failures(), "\n"))
	}
	for _, c := range load.writes.failed() {
		if !apierrors.IsServiceUnavailable(c.err) || !endedSoonAfterOneOf(c, kills, 2*time.Second) {
			t.Errorf("client-go call at %s failed: %v; want only 503 from the aggregator within 2 s of a kill (at %v)", c.start.Format("15:04:05.000"), c.err, kills)
		}
	}
}

// endedSoonAfterOneOf reports whether c ended within d after one of the times.
func endedSoonAfterOneOf(c call, times []time.Time, d time.Duration) bool {
	for _, t := range times {
		if !c.end.Before(t) && c.end.Sub(t) <= d {
			return true
		}
	}
	return false
}

// haltedVM is a VM that never runs: an API object only.
func haltedVM(name string) *v1.VirtualMachine {
	halted := v1.RunStrategyHalted
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{RunStrategy: &halted, Template: &v1.VirtualMachineInstanceTemplateSpec{
			Spec: vmiNamed(name).Spec,
		}},
	}
}

// scaleAPIServer sets vireo-apiserver's replicas and, when scaling up, waits until the
// APIServices are Available again.
func scaleAPIServer(t *testing.T, replicas int) {
	t.Helper()
	kubectl(t, "-n", v1.InstallNamespace, "scale", "deployment/vireo-apiserver", fmt.Sprintf("--replicas=%d", replicas))
	if replicas == 0 {
		eventuallyWithin(t, "every vireo-apiserver Pod gone", 90*time.Second, func() error {
			pods, err := kube.CoreV1().Pods(v1.InstallNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-apiserver"})
			if err != nil || len(pods.Items) > 0 {
				return fmt.Errorf("%d Pods left (err %v)", len(pods.Items), err)
			}
			return nil
		})
		return
	}
	kubectl(t, "-n", v1.InstallNamespace, "rollout", "status", "deployment/vireo-apiserver", "--timeout=3m")
	if err := cluster.WaitForAPIServices(t.Context(), 90*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestVireoAPIServerDown: with every vireo-apiserver replica gone, a running guest keeps
// running (the same QEMU process, untouched), kubectl says the API is unavailable, and a
// namespace without Vireo objects cannot finish deleting: kube-controller-manager's namespace
// controller must list every namespaced API before it removes the namespace, and waits,
// saying so in the namespace's NamespaceDeletionDiscoveryFailure condition, as it does for
// any aggregated API that is down. When vireo-apiserver is back the deletion completes and
// the guest's VMI is as it was.
func TestVireoAPIServerDown(t *testing.T) {
	ns, empty := namespace(t), namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		// Started paused: the guest takes no CPU; its QEMU process is what must survive.
		return strings.Replace(m, "  terminationGracePeriodSeconds: 10\n", "  terminationGracePeriodSeconds: 10\n  startStrategy: Paused\n", 1)
	})
	vmi := waitPhase(t, ns, "tiny", v1.Running, 90*time.Second)
	qemu, _ := guestProcesses(t, ns, "tiny", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of the guest: %v, want one", qemu)
	}

	t.Cleanup(func() { // a failed test still leaves vireo-apiserver serving
		if d, err := kube.AppsV1().Deployments(v1.InstallNamespace).Get(context.Background(), "vireo-apiserver", metav1.GetOptions{}); err == nil && ptr.Deref(d.Spec.Replicas, 0) == 0 {
			_, _, _ = kubectlResult("-n", v1.InstallNamespace, "scale", "deployment/vireo-apiserver", "--replicas=2")
			_ = cluster.WaitForAPIServices(context.Background(), 2*time.Minute)
		}
	})
	scaleAPIServer(t, 0)
	downAt := time.Now()
	if _, stderr, err := kubectlResult("-n", ns, "get", "vmi"); err == nil || !strings.Contains(stderr, "unable to handle the request") {
		t.Errorf("kubectl get vmi with vireo-apiserver down: %v %s, want the server's 503", err, stderr)
	}
	kubectl(t, "delete", "namespace", empty, "--wait=false")
	eventuallyWithin(t, "the namespace controller waiting for Vireo's APIs", 60*time.Second, func() error {
		got, err := kube.CoreV1().Namespaces().Get(t.Context(), empty, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.NamespaceDeletionDiscoveryFailure && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "kubevirt.io") {
				t.Logf("namespace %s: %s", empty, c.Message)
				return nil
			}
		}
		return fmt.Errorf("phase %s, conditions %+v", got.Status.Phase, got.Status.Conditions)
	})
	if err := syscall.Kill(qemu[0], 0); err != nil {
		t.Fatalf("the guest's QEMU (pid %d) died while vireo-apiserver was down: %v", qemu[0], err)
	}

	scaleAPIServer(t, 2)
	back := time.Now()
	eventuallyWithin(t, "the namespace deleted", 60*time.Second, func() error {
		if _, err := kube.CoreV1().Namespaces().Get(t.Context(), empty, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (err %v)", err)
		}
		return nil
	})
	t.Logf("vireo-apiserver down for %s; the namespace was deleted %s after it was back",
		back.Sub(downAt).Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
	got := waitPhase(t, ns, "tiny", v1.Running, 10*time.Second)
	if got.UID != vmi.UID || got.Status.NodeName != vmi.Status.NodeName {
		t.Errorf("VMI after the outage: uid %s on %s, want %s on %s", got.UID, got.Status.NodeName, vmi.UID, vmi.Status.NodeName)
	}
	if now, _ := guestProcesses(t, ns, "tiny", string(vmi.UID)); len(now) != 1 || now[0] != qemu[0] {
		t.Errorf("QEMU processes after the outage: %v, want the same one (%d)", now, qemu[0])
	}
}
