package main

import (
	"bufio"
	"bytes"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/test/bench/apimetrics"
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
}

// run is one measurement's state.
type run struct {
	env    *env
	n      int
	prefix string
	pin    bool
	tr     *tracker
	vmis   []*vmiTrack
	objs   []*v1.VirtualMachineInstance
	scrap  []apimetrics.RequestCounts
	cpu0   cpuSnapshot // before the VMIs were created
}

// lifecycle creates n VMIs at once, waits for them to run and boot, measures their processes,
// deletes them and waits until they and their processes are gone. It returns the VMIs as the
// API stored them (for the floor). With pin, VMI i runs on node i (the warm-up: every node
// pulls the image once).
func (e *env) lifecycle(ctx context.Context, n int, prefix string, idle time.Duration, pin bool) (lifecycleResult, []*v1.VirtualMachineInstance, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{env: e, n: n, prefix: prefix, pin: pin, tr: newTracker(lctx, e.cluster.Options().NodeDir)}
	if err := r.tr.start(lctx, e.cl, benchNS); err != nil {
		return lifecycleResult{}, nil, err
	}
	if err := r.scrape(ctx); err != nil {
		return lifecycleResult{}, nil, err
	}
	load := loadAvg()
	say("%s: creating %d VMI(s) at once (load average %s)", prefix, n, load)
	cpu0, err := takeCPUSnapshot()
	if err != nil {
		return lifecycleResult{}, nil, err
	}
	r.cpu0 = cpu0
	if err := r.createAll(ctx, prefix); err != nil {
		return lifecycleResult{}, nil, err
	}
	defer func() {
		for _, v := range r.vmis {
			if v.console != nil {
				v.console.close()
			}
		}
	}()
	res, err := r.startAndMeasure(ctx, idle)
	res.LoadAvg = load
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
	sctx, cancel := context.WithTimeout(ctx, r.env.c.startTimeout)
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

// createAll creates the VMIs, all at once.
func (r *run) createAll(ctx context.Context, prefix string) error {
	errs := make([]error, r.n)
	r.vmis = make([]*vmiTrack, r.n)
	var wg sync.WaitGroup
	for i := range r.n {
		vmi := r.env.template.DeepCopy()
		vmi.Name, vmi.Namespace = fmt.Sprintf("%s-%d", prefix, i), benchNS
		if nodes := r.env.cluster.NodeNames(); r.pin {
			vmi.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": nodes[i%len(nodes)]}
		}
		r.vmis[i] = r.tr.expect(vmi.Name, time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.env.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Create(ctx, vmi, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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
	dir := filepath.Join(r.env.c.out, "vmi-lifecycle-logs", r.prefix)
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
	fmt.Fprintf(&b, "not every VMI reached %s within %s (%v):", what, r.env.c.startTimeout, err)
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
