package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// The steps of a VMI's way from its create request to Running, in the order they happen, as
// the VMI and its launcher Pod record them: the controller's Scheduling (it created the Pod),
// the Pod's creation, kube-scheduler's binding, the kubelet's Ready, the controller's
// Scheduled, and the node agent's Running as its node's watch delivered it.
const (
	stepScheduling = "VMI Scheduling (controller)"
	stepPodCreated = "launcher Pod created"
	stepPodBound   = "Pod bound (kube-scheduler)"
	stepPodReady   = "Pod Ready (kubelet)"
	stepScheduled  = "VMI Scheduled (controller)"
	stepRunning    = "VMI Running (node agent's watch)"
)

var stepOrder = []string{stepScheduling, stepPodCreated, stepPodBound, stepPodReady, stepScheduled, stepRunning}

// stepLatency is how long after their create requests a wave's VMIs passed one step (seconds;
// the API's timestamps are whole seconds, so a step can show up to a second early).
type stepLatency struct {
	Step  string  `json:"step"`
	Count int     `json:"vmis"`
	P50s  float64 `json:"p50Seconds"`
	P90s  float64 `json:"p90Seconds"`
	P99s  float64 `json:"p99Seconds"`
}

// timeline holds, for each step, when each VMI of a wave passed it.
type timeline struct {
	start   time.Time
	created []time.Time
	at      map[string][]time.Time
	after   map[string][]time.Duration
}

// readTimeline lists the VMIs of keys and their launcher Pods and collects when each passed
// each step.
func (e *env) readTimeline(ctx context.Context, keys []string) (*timeline, error) {
	created := e.tracker.createdAt(keys)
	vmis, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the VMIs: %w", err)
	}
	pods, err := e.cl.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{v1.AppLabel: v1.LauncherApp}).String()})
	if err != nil {
		return nil, fmt.Errorf("listing the launcher Pods: %w", err)
	}
	podOf := map[types.UID]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		podOf[types.UID(p.Labels[v1.CreatedByLabel])] = p
	}
	running := e.tracker.runningAt(keys)
	tl := &timeline{at: map[string][]time.Time{}, after: map[string][]time.Duration{}}
	for i := range vmis.Items {
		vmi := &vmis.Items[i]
		key := vmi.Namespace + "/" + vmi.Name
		c, ok := created[key]
		if !ok {
			continue
		}
		if tl.start.IsZero() || c.Before(tl.start) {
			tl.start = c
		}
		tl.created = append(tl.created, c)
		for step, at := range stepTimes(vmi, podOf[vmi.UID]) {
			tl.add(step, c, at)
		}
		if r, ok := running[key]; ok {
			tl.add(stepRunning, c, r)
		}
	}
	return tl, nil
}

// stepTimes is when vmi and its launcher Pod (nil: none found) passed the steps they record.
func stepTimes(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) map[string]time.Time {
	out := map[string]time.Time{}
	for _, t := range vmi.Status.PhaseTransitionTimestamps {
		switch t.Phase {
		case v1.Scheduling:
			out[stepScheduling] = t.PhaseTransitionTimestamp.Time
		case v1.Scheduled:
			out[stepScheduled] = t.PhaseTransitionTimestamp.Time
		}
	}
	if pod == nil {
		return out
	}
	out[stepPodCreated] = pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case corev1.PodScheduled:
			out[stepPodBound] = c.LastTransitionTime.Time
		case corev1.PodReady:
			out[stepPodReady] = c.LastTransitionTime.Time
		}
	}
	return out
}

func (tl *timeline) add(step string, created, at time.Time) {
	tl.at[step] = append(tl.at[step], at)
	tl.after[step] = append(tl.after[step], at.Sub(created))
}

// latencies summarizes every step.
func (tl *timeline) latencies() []stepLatency {
	var out []stepLatency
	for _, step := range stepOrder {
		ds := slices.Clone(tl.after[step])
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		pct := func(p float64) float64 { return ds[int(p*float64(len(ds)-1))].Seconds() }
		out = append(out, stepLatency{Step: step, Count: len(ds), P50s: pct(0.50), P90s: pct(0.90), P99s: pct(0.99)})
	}
	return out
}

// plot draws, for each step, how many of the wave's VMIs had passed it against the time since
// the wave's first create request: where the curves bunch is where VMIs wait.
func (tl *timeline) plot(file string, vmis int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("The wave to %d VMIs: VMIs past each step", vmis)
	p.X.Label.Text = "seconds since the wave's first create request"
	p.Y.Label.Text = "VMIs"
	p.Legend.Top, p.Legend.Left = true, true
	lines := []any{"created (request sent)", cumulative(tl.start, tl.created)}
	for _, step := range stepOrder {
		if len(tl.at[step]) > 0 {
			lines = append(lines, step, cumulative(tl.start, tl.at[step]))
		}
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, file)
}

// cumulative is the count of times at or before each of them, against seconds since start.
func cumulative(start time.Time, times []time.Time) plotter.XYs {
	sorted := slices.Clone(times)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	pts := make(plotter.XYs, len(sorted))
	for i, t := range sorted {
		pts[i] = plotter.XY{X: t.Sub(start).Seconds(), Y: float64(i + 1)}
	}
	return pts
}

// timelineFile is the plot of the wave to size VMIs in dir.
func timelineFile(dir string, size int) string {
	return filepath.Join(dir, fmt.Sprintf("scale-timeline-%d.png", size))
}
