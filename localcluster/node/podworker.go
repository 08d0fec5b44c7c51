package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/localcluster/node/container"
	"github.com/vireo-dev/vireo/localcluster/node/podnet"
)

// podWorker runs one Pod: its sandbox (network namespace and volumes), its init containers
// in order, then its containers, each restarted under the restart policy with back-off;
// and on deletion, its graceful termination. Every change is published at once.
type podWorker struct {
	p   *Provider
	dir string
	// namespace and name never change; read them without the lock.
	namespace, name string

	pubMu  sync.Mutex // held across computing and publishing a status; taken before mu
	mu     sync.Mutex
	pod    *corev1.Pod
	obs    PodObservation
	runs   map[string]*containerRun
	podIP  string
	netns  string
	tokens map[string]cachedToken
	// reported is the status the API had when this node run took the Pod: an adopted
	// container keeps the readiness it had until its probe says otherwise.
	reported    corev1.PodStatus
	terminating chan struct{}
	stopOnce    sync.Once
	grace       time.Duration
}

// containerRun is the node's record of one container.
type containerRun struct {
	obs     ContainerObservation
	attempt int
	dir     string // the current run's state directory, empty before the first start
}

func newPodWorker(p *Provider, pod *corev1.Pod) *podWorker {
	w := &podWorker{p: p, dir: p.podDir(pod.UID), namespace: pod.Namespace, name: pod.Name, pod: pod.DeepCopy(), runs: map[string]*containerRun{}, tokens: map[string]cachedToken{},
		terminating: make(chan struct{})}
	w.reported = *pod.Status.DeepCopy()
	w.obs.StartTime = time.Now()
	if pod.Status.StartTime != nil {
		w.obs.StartTime = pod.Status.StartTime.Time
	}
	return w
}

// snapshot is the Pod with its current status.
func (w *podWorker) snapshot() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod.DeepCopy()
}

// update takes the API's newer copy of the Pod (labels, annotations, deletion stamps).
func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	status := w.pod.Status
	w.pod = pod.DeepCopy()
	w.pod.Status = status
}

// change applies fn to the observation under the lock and publishes the resulting status.
// Statuses are published in the order they were computed (pubMu), or virtual-kubelet, which
// keeps the last one it is given, could end with a stale one.
func (w *podWorker) change(fn func()) {
	w.pubMu.Lock()
	defer w.pubMu.Unlock()
	w.mu.Lock()
	fn()
	w.obs.Now = time.Now()
	w.obs.InitContainers = w.observations(w.pod.Spec.InitContainers)
	w.obs.Containers = w.observations(w.pod.Spec.Containers)
	w.pod.Status = PodStatus(w.pod, w.obs)
	pod := w.pod.DeepCopy()
	w.mu.Unlock()
	w.p.publish(pod)
}

func (w *podWorker) observations(specs []corev1.Container) []ContainerObservation {
	var out []ContainerObservation
	for _, c := range specs {
		if r, ok := w.runs[c.Name]; ok {
			out = append(out, r.obs)
		}
	}
	return out
}

func (w *podWorker) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-w.terminating
		cancel()
		w.stopRunning()
	}()
	pod := w.snapshot()
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		klog.ErrorS(err, "pod directory", "pod", klog.KObj(pod))
	}
	// setupSandbox fails only when the Pod is deleted meanwhile.
	if w.setupSandbox(ctx) {
		go w.syncVolumes(ctx)
		w.reportUnenforcedLimits(pod)
		if w.runInitContainers(ctx) {
			w.runContainers(ctx, pod)
		}
	}
	<-w.terminating
	w.shutdown()
}

// runContainers supervises the Pod's containers, all at once, until each has stopped for good.
func (w *podWorker) runContainers(ctx context.Context, pod *corev1.Pod) {
	var wg sync.WaitGroup
	for i := range pod.Spec.Containers {
		wg.Add(1)
		go func(c *corev1.Container) {
			defer wg.Done()
			w.supervise(ctx, c, false)
		}(&pod.Spec.Containers[i])
	}
	wg.Wait()
}

// setupSandbox gives the Pod its network namespace and IP (the node's own with
// hostNetwork) and its volumes, retrying with back-off until it succeeds or the Pod is deleted.
func (w *podWorker) setupSandbox(ctx context.Context) bool {
	pod := w.snapshot()
	for streak := 0; ; streak++ {
		err := w.trySandbox(ctx, pod)
		if err == nil {
			return true
		}
		reason := "FailedCreatePodSandBox"
		var vol *volumeError
		if errors.As(err, &vol) {
			reason = "FailedMount"
		}
		w.event(corev1.EventTypeWarning, reason, "%v", err)
		if !w.pause(ctx, DefaultBackoff.Delay(streak+1)) {
			return false
		}
	}
}

func (w *podWorker) trySandbox(ctx context.Context, pod *corev1.Pod) error {
	ip := w.p.cfg.Address.String()
	if !pod.Spec.HostNetwork {
		net, err := w.p.network(ctx)
		if err != nil {
			return err
		}
		att, err := net.Setup(ctx, podRef(pod))
		if err != nil {
			return err
		}
		if sc := pod.Spec.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
			sysctls := map[string]string{}
			for _, s := range sc.Sysctls {
				sysctls[s.Name] = s.Value
			}
			if err := podnet.SetSysctls(att, sysctls); err != nil {
				return fmt.Errorf("spec.securityContext.sysctls: %w", err)
			}
		}
		ip = att.IP.String()
		w.mu.Lock()
		w.netns = att.NetnsPath
		w.mu.Unlock()
		if err := w.writeEtcHosts(pod, ip); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.podIP = ip
	w.mu.Unlock()
	if err := w.setupVolumes(ctx, pod); err != nil {
		return err
	}
	w.change(func() {
		w.obs.SandboxReady = true
		w.obs.PodIPs = []string{ip}
		w.obs.HostIPs = []string{w.p.cfg.Address.String()}
	})
	return nil
}

func podRef(pod *corev1.Pod) podnet.PodRef {
	return podnet.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}
}

func (w *podWorker) podIPs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.podIP == "" {
		return nil
	}
	return []string{w.podIP}
}

// runInitContainers runs each init container to a successful exit, in order. It returns
// false when one failed for good (restartPolicy Never) or the Pod is being deleted.
func (w *podWorker) runInitContainers(ctx context.Context) bool {
	pod := w.snapshot()
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar never exits 0: waiting for it would hang the Pod without a word.
			msg := fmt.Sprintf("init container %q has restartPolicy Always (a sidecar), which vireo-local nodes do not run yet; make it a regular container", c.Name)
			w.change(func() {
				w.runs[c.Name] = &containerRun{obs: ContainerObservation{Name: c.Name, WaitingReason: ReasonCreateContainerConfigError, WaitingMessage: msg}}
			})
			w.event(corev1.EventTypeWarning, "Failed", "Error: %s", msg)
			return false
		}
		if exit := w.supervise(ctx, c, true); exit == nil || exit.ExitCode != 0 {
			return false
		}
	}
	return true
}

// supervise starts container c (or adopts its running process), waits for each exit and
// restarts it as the restart policy says, after the back-off. An init container is done
// when it exits 0. It returns the final exit, or nil when the Pod is being deleted.
func (w *podWorker) supervise(ctx context.Context, c *corev1.Container, init bool) *Exit {
	policy := w.snapshot().Spec.RestartPolicy
	attempt := w.lastAttempt(c.Name)
	adopt := attempt >= 0
	if attempt < 0 {
		attempt = 0
	}
	w.change(func() {
		w.runs[c.Name] = &containerRun{obs: ContainerObservation{Name: c.Name, RestartCount: int32(attempt)}, attempt: attempt}
	})
	streak := 0
	for {
		var exit *Exit
		if adopt {
			exit = w.adopt(ctx, c.Name, attempt)
			adopt = false
		}
		if exit == nil {
			var failed bool
			exit, failed = w.startAndWait(ctx, c, attempt)
			if failed {
				if !w.pause(ctx, DefaultBackoff.Delay(streak+1)) {
					return nil
				}
				streak++
				continue
			}
		}
		if exit == nil || w.isTerminating() {
			return exit
		}
		exit = w.withLogMessage(c, attempt, exit)
		done := init && exit.ExitCode == 0
		if done || !ShouldRestart(policy, exit.ExitCode) {
			w.change(func() { w.runs[c.Name].obs.Exit = exit })
			return exit
		}
		var restartAt time.Time
		restartAt, streak = DefaultBackoff.Next(streak, exit.StartedAt, exit.FinishedAt)
		w.change(func() {
			r := w.runs[c.Name]
			r.obs.LastExit, r.obs.Exit = exit, nil
			if time.Until(restartAt) > 0 {
				r.obs.WaitingReason = ReasonCrashLoopBackOff
				r.obs.WaitingMessage = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", time.Until(restartAt).Round(time.Second), c.Name, w.key())
			}
		})
		if !w.pause(ctx, time.Until(restartAt)) {
			return nil
		}
		attempt++
		w.change(func() { r := w.runs[c.Name]; r.attempt = attempt; r.obs.RestartCount = int32(attempt) })
	}
}

// adopt re-attaches a run found on disk: a live process is waited for; one that ended while
// the node was away reports its exit.
func (w *podWorker) adopt(ctx context.Context, name string, attempt int) *Exit {
	dir := w.runDir(name, attempt)
	st, err := container.Inspect(dir)
	if err != nil || st.State == nil {
		return nil
	}
	pod := w.snapshot()
	id := containerID(pod, name, attempt)
	if attempt > 0 {
		// The run before: lastState, as before the node restarted.
		if prev, err := container.Inspect(w.runDir(name, attempt-1)); err == nil && prev.State != nil && prev.Exit != nil {
			last := toExit(prev.Exit, containerID(pod, name, attempt-1), prev.State.StartedAt)
			w.change(func() { w.runs[name].obs.LastExit = last })
		}
	}
	if st.Running {
		w.change(func() {
			r := w.runs[name]
			r.dir = dir
			r.obs.ContainerID, r.obs.Running, r.obs.StartedAt = id, true, st.State.StartedAt
			r.obs.WaitingReason, r.obs.WaitingMessage = "", ""
		})
		return w.waitExit(ctx, w.containerNamed(name), dir, id, st.State.StartedAt)
	}
	if st.Exit == nil {
		return nil
	}
	return toExit(st.Exit, id, st.State.StartedAt)
}

// startAndWait starts one run and waits for its exit. failed reports a start that did not
// happen (the waiting reason says why).
func (w *podWorker) startAndWait(ctx context.Context, c *corev1.Container, attempt int) (exit *Exit, failed bool) {
	if w.isTerminating() {
		return nil, false
	}
	spec, err := w.containerSpec(ctx, c, attempt)
	var st container.State
	dir := w.runDir(c.Name, attempt)
	if err == nil {
		_ = os.RemoveAll(dir) // a start that failed before leaves nothing to adopt
		if err = os.MkdirAll(dir, 0o700); err == nil {
			st, err = container.Start(w.p.cfg.Self, dir, spec)
		}
	}
	if err != nil {
		reason, msg := ReasonRunContainerError, err.Error()
		var ce *ContainerError
		if errors.As(err, &ce) {
			reason, msg = ce.Reason, ce.Message
		}
		w.change(func() { r := w.runs[c.Name]; r.obs.WaitingReason, r.obs.WaitingMessage = reason, msg })
		w.event(corev1.EventTypeWarning, "Failed", "Error: %s: %s", reason, msg)
		return nil, true
	}
	id := containerID(w.snapshot(), c.Name, attempt)
	w.change(func() {
		r := w.runs[c.Name]
		r.dir = dir
		r.obs.ContainerID, r.obs.Running, r.obs.StartedAt = id, true, st.StartedAt
		r.obs.WaitingReason, r.obs.WaitingMessage, r.obs.Exit = "", "", nil
	})
	w.event(corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
	w.pruneRuns(c.Name, attempt)
	if w.isTerminating() {
		// Deleted while starting: stopRunning may have missed this run.
		go stopContainers([]string{dir}, w.gracePeriod())
	}
	return w.waitExit(ctx, c, dir, id, st.StartedAt), false
}

// waitExit probes a run while it runs and waits for it to end, also when the Pod is being
// deleted (the termination signals it), and records the exit. Without a readiness probe a
// running container is ready; without a startup probe it is started.
func (w *podWorker) waitExit(ctx context.Context, c *corev1.Container, dir, id string, startedAt time.Time) *Exit {
	name := c.Name
	ready, started := c.ReadinessProbe == nil && c.StartupProbe == nil, c.StartupProbe == nil
	for _, cs := range append(w.reported.InitContainerStatuses, w.reported.ContainerStatuses...) {
		if cs.Name == name && cs.ContainerID == id && cs.State.Running != nil {
			// Adopted after a node restart: as reported before, until a probe says otherwise.
			ready, started = cs.Ready, cs.Started != nil && *cs.Started || c.StartupProbe == nil
		}
	}
	w.change(func() {
		r := w.runs[name]
		r.obs.Ready, r.obs.Started = ready, started
	})
	probeCtx, stopProbes := context.WithCancel(ctx)
	go w.probeRun(probeCtx, c, dir)
	ex, err := container.Wait(context.Background(), dir)
	stopProbes()
	exit := &Exit{ExitCode: -1, Message: fmt.Sprintf("lost track of the container: %v", err), StartedAt: startedAt, FinishedAt: time.Now(), ContainerID: id}
	if err == nil {
		exit = toExit(&ex, id, startedAt)
	}
	w.change(func() {
		r := w.runs[name]
		r.obs.Running, r.obs.Ready = false, false
		r.obs.Exit = exit
	})
	return exit
}

func toExit(ex *container.Exit, id string, startedAt time.Time) *Exit {
	return &Exit{ExitCode: int32(ex.Code), Signal: int32(ex.Signal), OOMKilled: ex.Reason == ReasonOOMKilled,
		StartedAt: startedAt, FinishedAt: ex.FinishedAt, ContainerID: id}
}

// pause waits d, or returns false at once when the Pod is being deleted.
func (w *podWorker) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return !w.isTerminating()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !w.isTerminating()
	case <-ctx.Done():
		return false
	}
}

func (w *podWorker) isTerminating() bool {
	select {
	case <-w.terminating:
		return true
	default:
		return false
	}
}

// terminate starts the Pod's deletion with its grace period.
func (w *podWorker) terminate(pod *corev1.Pod) {
	w.update(pod)
	w.stopOnce.Do(func() {
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = *pod.DeletionGracePeriodSeconds
		} else if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		w.mu.Lock()
		w.grace = time.Duration(grace) * time.Second
		w.mu.Unlock()
		close(w.terminating)
	})
}

// stopRunning stops the running containers once the Pod is being deleted: SIGTERM to each
// process group, SIGKILL after the grace period.
func (w *podWorker) stopRunning() {
	stopContainers(w.runDirs(true), w.gracePeriod())
}

func (w *podWorker) gracePeriod() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.grace
}

// runDirs lists the containers' current run directories (only the running ones if asked).
func (w *podWorker) runDirs(running bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var dirs []string
	for _, r := range w.runs {
		if r.dir != "" && (!running || r.obs.Running) {
			dirs = append(dirs, r.dir)
		}
	}
	return dirs
}

// shutdown runs once every container has stopped: it tears the sandbox down, reports the
// terminal status and removes the Pod from the API, as a kubelet does once its containers
// are gone.
//
// Mount points a container needed that did not exist on the host stay (empty directories):
// removing one would also detach it from the mount namespace of another container that uses
// the same path, which rmdir allows since Linux 3.18.
func (w *podWorker) shutdown() {
	pod := w.snapshot()
	if !pod.Spec.HostNetwork {
		if net, err := w.p.network(context.Background()); err == nil {
			if err := net.Teardown(context.Background(), podRef(pod)); err != nil {
				klog.ErrorS(err, "tearing down the Pod network", "pod", klog.KObj(pod))
			}
		}
	}
	w.teardownVolumes()
	w.change(func() {})
	_ = os.RemoveAll(w.dir)
	opts := metav1.NewDeleteOptions(0)
	opts.Preconditions = metav1.NewUIDPreconditions(string(pod.UID))
	err := w.p.client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, *opts)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		klog.ErrorS(err, "deleting the terminated Pod", "pod", klog.KObj(pod))
	}
	w.p.forget(pod.UID)
}

// stopContainers signals every run's process group with SIGTERM and, after grace, SIGKILL.
func stopContainers(dirs []string, grace time.Duration) {
	for _, d := range dirs {
		_ = container.Signal(d, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, d := range dirs {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_, err := container.Wait(ctx, d)
		cancel()
		if err != nil {
			_ = container.Signal(d, syscall.SIGKILL)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = container.Wait(ctx, d)
			cancel()
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		_ = container.WaitShimGone(ctx, d)
		cancel()
	}
}

func (w *podWorker) event(eventType, reason, format string, args ...any) {
	if w.p.events != nil {
		w.p.events.Eventf(w.snapshot(), eventType, reason, format, args...)
	}
}

// reportUnenforcedLimits tells the user, with an event, when the Pod's resource limits cannot
// be enforced: the host lacks the memory or cpu cgroup controller.
func (w *podWorker) reportUnenforcedLimits(pod *corev1.Pod) {
	how, ok := container.CgroupsAvailable()
	if ok {
		return
	}
	for _, c := range allContainers(pod) {
		if len(c.Resources.Limits) > 0 {
			w.event(corev1.EventTypeWarning, "ResourceLimitsNotEnforced",
				"container %s has resource limits, which this node cannot enforce: the host's %s lacks the memory or cpu controller", c.Name, how)
		}
	}
}

// containerNamed is the spec of the Pod's (init) container name.
func (w *podWorker) containerNamed(name string) *corev1.Container {
	pod := w.snapshot()
	for _, c := range allContainers(pod) {
		if c.Name == name {
			return &c
		}
	}
	return &corev1.Container{Name: name}
}

// key is the Pod's namespace/name.
func (w *podWorker) key() string { return w.namespace + "/" + w.name }
