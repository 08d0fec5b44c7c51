package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// lifecycleResult is what one run (n VMIs created at once) measured.
type lifecycleResult struct {
	VMIs            int       `json:"vmis"`
	CreateToRunning durations `json:"creationToRunning"`
	CreateToMarker  durations `json:"creationToMarker"`
	// Milestones are creation -> each milestone, observed by the benchmark (milliseconds).
	Milestones map[string]durations `json:"milestonesFromCreation"`
	// PhaseStamps are the intervals between status.phaseTransitionTimestamps (whole seconds:
	// metav1.Time has no finer resolution), with creationTimestamp as the start.
	PhaseStamps  map[string]durations `json:"phaseTransitionIntervals"`
	DeleteToGone durations            `json:"deletionToGone"`
	// Writes are the write requests per phase of the run: creationToRunning, runningToMarker,
	// idle (the idle-CPU window), deletion and the whole lifecycle.
	Writes   map[string]writes `json:"writes"`
	PerNode  map[string]int    `json:"vmisPerNode"`
	Memory   []vmiMemory       `json:"memory"`
	Overhead numbers           `json:"overheadMiB"`
	QEMURSS  numbers           `json:"qemuRSSMiB"`
	TotalRSS numbers           `json:"totalRSSMiB"`
	IdleCPU  *idleCPU          `json:"idleCPU,omitempty"`
	QEMUArgs []string          `json:"qemuArgsFirstVMI"`
	// Leftovers are processes of the run's VMIs still running 30 s after the VMIs were gone.
	Leftovers []string `json:"leftoverProcesses,omitempty"`
	// StartCPU is where the machine's CPU went from creation until every VMI ran.
	StartCPU *startCPU `json:"startCPU,omitempty"`
	// LoadAvg is /proc/loadavg before the run (other work on the machine shows there).
	LoadAvg string `json:"loadAvgBefore"`
	// MachineBefore is the machine's memory before the first create; MachineRunning once every
	// guest printed its marker.
	MachineBefore  hostproc.HostMemory `json:"machineMemoryBefore"`
	MachineRunning hostproc.HostMemory `json:"machineMemoryAllRunning"`
	// CreateStopped says why fewer VMIs than asked were created (empty: all were).
	CreateStopped string `json:"createStopped,omitempty"`
}

// runSpec is what one run creates and how.
type runSpec struct {
	n      int
	prefix string
	// idle is the window of the idle-CPU measurement (0: none).
	idle time.Duration
	// pin puts VMI i on node i (the warm-up: every node pulls the image once).
	pin bool
	// interval paces the creates (0: all at once).
	interval time.Duration
	// cpuRequest, when set, is each VMI's spec.domain.resources.requests.cpu.
	cpuRequest string
	// minAvailable stops the creates once the machine's MemAvailable falls below it (0: never).
	minAvailable int64
	// timeout bounds creation -> every guest's marker (0: config.startTimeout).
	timeout time.Duration
}

// run is one measurement's state.
type run struct {
	env     *env
	spec    runSpec
	n       int // the VMIs created (spec.n unless the memory guard stopped the creates)
	timeout time.Duration
	tr      *tracker
	vmis    []*vmiTrack
	objs    []*v1.VirtualMachineInstance
	scrap   []apimetrics.RequestCounts
	cpu0    cpuSnapshot // before the VMIs were created
}

// lifecycle creates the spec's VMIs (at once, or paced), waits for them to run and boot,
// measures their processes, deletes them and waits until they and their processes are gone.
// It returns the VMIs as the API stored them (for the floor).
func (e *env) lifecycle(ctx context.Context, spec runSpec) (lifecycleResult, []*v1.VirtualMachineInstance, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefix := spec.prefix
	r := &run{env: e, spec: spec, n: spec.n, timeout: cmp.Or(spec.timeout, e.c.startTimeout), tr: newTracker(lctx, e.cluster.Options().NodeDir)}
	if err := r.tr.start(lctx, e.cl, benchNS); err != nil {
		return lifecycleResult{}, nil, err
	}
	if err := r.scrape(ctx); err != nil {
		return lifecycleResult{}, nil, err
	}
	load := loadAvg()
	pace := "at once"
	if spec.interval > 0 {
		pace = spec.interval.String() + " apart"
	}
	say("%s: creating %d VMI(s) %s (load average %s)", prefix, spec.n, pace, load)
	machine, err := hostproc.ReadHostMemory()
	if err != nil {
		return lifecycleResult{}, nil, err
	}
	cpu0, err := takeCPUSnapshot()
	if err != nil {
		return lifecycleResult{}, nil, err
	}
	r.cpu0 = cpu0
	stopped, err := r.createAll(ctx)
	if err != nil {
		return lifecycleResult{}, nil, err
	}
	defer func() {
		for _, v := range r.vmis {
			if v.console != nil {
				v.console.close()
			}
		}
	}()
	res, err := r.startAndMeasure(ctx, spec.idle)
	res.LoadAvg, res.MachineBefore, res.CreateStopped = load, machine, stopped
	if err != nil {
		return res, r.objs, err
	}
	say("%s: deleting the VMI(s)", prefix)
	deletion, err := r.deleteAll(ctx)
	if err != nil {
		return res, r.objs, err
	}
	res.DeleteToGone = summarize(deletion)
	if err := r.scrape(ctx); err != nil {
		return res, r.objs, err
	}
	r.writes(&res)
	res.Leftovers, err = leftoversAfter(ctx, 30*time.Second)
	return res, r.objs, err
}

// startAndMeasure waits for Running and the markers, then measures memory and idle CPU.
func (r *run) startAndMeasure(ctx context.Context, idle time.Duration) (lifecycleResult, error) {
	res := lifecycleResult{VMIs: r.n}
	sctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	running := func() bool {
		return r.all(func(v *vmiTrack) bool { return !v.at[msRunning].IsZero() || !v.at["failed"].IsZero() })
	}
	if err := r.tr.wait(sctx, running); err != nil || r.anyFailed() {
		return res, r.failure(ctx, "Running", err)
	}
	if cpu1, err := takeCPUSnapshot(); err == nil {
		c := cpuBetween(r.cpu0, cpu1)
		res.StartCPU = &c
	}
	if err := r.scrape(ctx); err != nil {
		return res, err
	}
	booted := func() bool {
		return r.all(func(v *vmiTrack) bool { return v.console != nil && isClosed(v.console.done) })
	}
	if err := r.tr.wait(sctx, booted); err != nil || !r.allMarked() {
		return res, r.failure(ctx, "the guest marker", err)
	}
	if err := r.scrape(ctx); err != nil {
		return res, err
	}
	if err := r.fetch(ctx); err != nil {
		return res, err
	}
	r.launcherLogs(ctx)
	r.componentLogs(ctx, r.vmis[0].created.Add(-time.Second))
	r.times(&res)
	machine, err := hostproc.ReadHostMemory()
	if err != nil {
		return res, err
	}
	res.MachineRunning = machine
	mem, groups, err := measureMemory(r.objs)
	if err != nil {
		return res, err
	}
	res.Memory = mem
	memorySummary(&res)
	res.QEMUArgs = normalizeArgs(groups[0].qemuArgs)
	if idle > 0 {
		agents, err := nodeAgents(r.env.cluster.NodeNames())
		if err != nil {
			return res, err
		}
		say("measuring idle CPU over %s with %d guest(s) booted", idle, r.n)
		cpu, err := measureIdleCPU(ctx, groups, agents, idle)
		if err != nil {
			return res, err
		}
		res.IdleCPU = &cpu
	}
	return res, r.scrape(ctx)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// all reports whether every VMI satisfies f; called under the tracker's lock.
func (r *run) all(f func(*vmiTrack) bool) bool {
	for _, v := range r.vmis {
		if !f(v) {
			return false
		}
	}
	return true
}

func (r *run) anyFailed() bool {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	return !r.all(func(v *vmiTrack) bool { return v.at["failed"].IsZero() })
}

func (r *run) allMarked() bool {
	for _, v := range r.vmis {
		if _, m, _ := v.console.result(); m.IsZero() {
			return false
		}
	}
	return true
}

func (r *run) scrape(ctx context.Context) error {
	c, err := r.env.scraper.Scrape(ctx)
	if err != nil {
		return err
	}
	r.scrap = append(r.scrap, c)
	return nil
}

// createAll creates the VMIs, all at once or spec.interval apart (each create in its own
// goroutine, so a slow answer does not delay the next). It stops early when the machine's
// MemAvailable falls below spec.minAvailable and returns why (r.n is then the VMIs created).
func (r *run) createAll(ctx context.Context) (stopped string, err error) {
	errs := make([]error, r.spec.n)
	r.vmis = make([]*vmiTrack, 0, r.spec.n)
	var wg sync.WaitGroup
	var tick *time.Ticker
	if r.spec.interval > 0 {
		tick = time.NewTicker(r.spec.interval)
		defer tick.Stop()
	}
	for i := range r.spec.n {
		if i > 0 && tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if stopped = r.memoryGuard(); stopped != "" {
			say("%s: %s", r.spec.prefix, stopped)
			break
		}
		vmi := r.newVMI(i)
		r.vmis = append(r.vmis, r.tr.expect(vmi.Name, time.Now()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.env.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Create(ctx, vmi, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	r.n = len(r.vmis)
	return stopped, errors.Join(errs...)
}

// newVMI is the run's VMI number i, from the template.
func (r *run) newVMI(i int) *v1.VirtualMachineInstance {
	vmi := r.env.template.DeepCopy()
	vmi.Name, vmi.Namespace = fmt.Sprintf("%s-%d", r.spec.prefix, i), benchNS
	if nodes := r.env.cluster.NodeNames(); r.spec.pin {
		vmi.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": nodes[i%len(nodes)]}
	}
	if r.spec.cpuRequest != "" {
		if vmi.Spec.Domain.Resources.Requests == nil {
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{}
		}
		vmi.Spec.Domain.Resources.Requests[v1.ResourceCPU] = resource.MustParse(r.spec.cpuRequest)
	}
	return vmi
}

// memoryGuard says why no more VMIs may be created: the machine's available memory fell
// below spec.minAvailable (empty: go on).
func (r *run) memoryGuard() string {
	if r.spec.minAvailable <= 0 {
		return ""
	}
	m, err := hostproc.ReadHostMemory()
	if err != nil || m.Available >= r.spec.minAvailable {
		return ""
	}
	return fmt.Sprintf("stopped creating after %d VMI(s): the machine's available memory fell to %d MiB (the guard keeps %d MiB)",
		len(r.vmis), m.Available>>20, r.spec.minAvailable>>20)
}

// fetch reads the VMIs as the API has them now.
func (r *run) fetch(ctx context.Context) error {
	r.objs = nil
	for _, v := range r.vmis {
		obj, err := r.env.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, v.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.objs = append(r.objs, obj)
	}
	return nil
}

// launcherLogs records when each launcher was ready and started its domain, from the
// timestamps of its log lines.
func (r *run) launcherLogs(ctx context.Context) {
	// libvirtd logs "getaddrinfo failed" when it cannot resolve its host name (it looks it up
	// for the QEMU log header of every start), and taints a domain with custom-argv (all of
	// Vireo's with an interface) just before it launches QEMU.
	marks := map[string]string{"vireo-launcher ready": msLauncherReady, "Domain started": msDomainStarted,
		"getaddrinfo failed": msHostnameFail, "tainted: custom-argv": msQEMULaunched}
	for _, v := range r.vmis {
		data, err := r.env.cl.kube.CoreV1().Pods(benchNS).GetLogs(v.pod, &corev1.PodLogOptions{
			Container: launcherpodapi.ContainerName, Timestamps: true}).DoRaw(ctx)
		if err != nil {
			say("reading the log of launcher %s: %v", v.pod, err)
			continue
		}
		r.saveLog(v.name+".launcher.log", data)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			stamp, line, _ := strings.Cut(sc.Text(), " ")
			t, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				continue
			}
			for text, m := range marks {
				if strings.Contains(line, text) {
					r.tr.mu.Lock()
					r.tr.mark(v, m, t)
					r.tr.mu.Unlock()
				}
			}
		}
	}
}

// saveLog keeps a log of the run in the output directory, for looking into its figures.
func (r *run) saveLog(name string, data []byte) {
	dir := filepath.Join(r.env.c.out, "vmi-lifecycle-logs", r.spec.prefix)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		say("keeping %s: %v", name, err)
	}
}

// componentLogs keeps the logs Vireo's components wrote since the run began.
func (r *run) componentLogs(ctx context.Context, since time.Time) {
	for _, app := range []string{"vireo-nodeagent", "vireo-controller"} {
		pods, err := r.env.cl.kube.CoreV1().Pods("vireo-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + app})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			st := metav1.NewTime(since)
			data, err := r.env.cl.kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Timestamps: true, SinceTime: &st}).DoRaw(ctx)
			if err == nil {
				r.saveLog(app+"-"+p.Spec.NodeName+".log", data)
			}
		}
	}
}

// deleteAll deletes the VMIs at once and waits until they are gone; it returns each VMI's
// deletion -> gone.
func (r *run) deleteAll(ctx context.Context) ([]time.Duration, error) {
	asked := make([]time.Time, len(r.vmis))
	errs := make([]error, len(r.vmis))
	var wg sync.WaitGroup
	for i, v := range r.vmis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			asked[i] = time.Now()
			errs[i] = r.env.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Delete(ctx, v.name, metav1.DeleteOptions{})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	gone := func() bool { return r.all(func(v *vmiTrack) bool { return !v.gone.IsZero() }) }
	if err := r.tr.wait(dctx, gone); err != nil {
		return nil, fmt.Errorf("the VMIs were not gone within 2 minutes of their deletion: %w", err)
	}
	out := make([]time.Duration, len(r.vmis))
	for i, v := range r.vmis {
		out[i] = v.gone.Sub(asked[i])
	}
	return out, nil
}

// failure describes why the run did not reach what, with each VMI's phase and console.
func (r *run) failure(ctx context.Context, what string, err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "not every VMI reached %s within %s (%v):", what, r.timeout, err)
	for _, v := range r.vmis {
		obj, gerr := r.env.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, v.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(gerr):
			fmt.Fprintf(&b, "\n  %s: gone", v.name)
		case gerr != nil:
			fmt.Fprintf(&b, "\n  %s: %v", v.name, gerr)
		default:
			fmt.Fprintf(&b, "\n  %s: phase %s, reason %q, conditions %+v", v.name, obj.Status.Phase, obj.Status.Reason, obj.Status.Conditions)
		}
		if v.console != nil {
			_, _, cerr := v.console.result()
			fmt.Fprintf(&b, "\n    console: %v; last output: %q", cerr, tail(v.console.output(), 300))
		}
	}
	return errors.New(b.String())
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
