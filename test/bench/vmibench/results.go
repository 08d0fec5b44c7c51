package main

import (
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Write buckets, between the run's scrapes.
const (
	wToRunning = "creationToRunning"
	wToMarker  = "runningToMarker"
	wIdle      = "idle"
	wDeletion  = "deletion"
	wLifecycle = "lifecycle"
)

// times summarizes the milestones and the phase timestamps of the run's VMIs.
func (r *run) times(res *lifecycleResult) {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	byMilestone := map[string][]time.Duration{}
	var running, marker []time.Duration
	res.PerNode = map[string]int{}
	for _, v := range r.vmis {
		for m, at := range v.at {
			if m != "failed" {
				byMilestone[m] = append(byMilestone[m], at.Sub(v.created))
			}
		}
		if _, m, _ := v.console.result(); !m.IsZero() {
			byMilestone[msMarker] = append(byMilestone[msMarker], m.Sub(v.created))
			marker = append(marker, m.Sub(v.created))
		}
		if c, _, _ := v.console.result(); !c.IsZero() {
			byMilestone[msConsole] = append(byMilestone[msConsole], c.Sub(v.created))
		}
		running = append(running, v.at[msRunning].Sub(v.created))
		res.PerNode[v.node]++
	}
	res.CreateToRunning, res.CreateToMarker = summarize(running), summarize(marker)
	res.Milestones = map[string]durations{}
	for m, ds := range byMilestone {
		res.Milestones[m] = summarize(ds)
	}
	res.PhaseStamps = phaseIntervals(r.objs)
}

// phaseIntervals summarizes creation -> first phase and each phase -> the next, from the
// VMIs' own timestamps.
func phaseIntervals(objs []*v1.VirtualMachineInstance) map[string]durations {
	by := map[string][]time.Duration{}
	for _, o := range objs {
		prevName, prev := "creation", o.CreationTimestamp.Time
		for _, p := range o.Status.PhaseTransitionTimestamps {
			key := prevName + " -> " + string(p.Phase)
			by[key] = append(by[key], p.PhaseTransitionTimestamp.Sub(prev))
			prevName, prev = string(p.Phase), p.PhaseTransitionTimestamp.Time
		}
	}
	out := map[string]durations{}
	for k, ds := range by {
		out[k] = summarize(ds)
	}
	return out
}

// writes computes the write buckets from the run's five scrapes (before creation, all
// Running, all markers, after the idle window, all deleted).
func (r *run) writes(res *lifecycleResult) {
	s := r.scrap
	if len(s) < 5 {
		return
	}
	n, own := r.n, float64(r.n)
	res.Writes = map[string]writes{
		wToRunning: delta(s[0], s[1], n, own, 0),
		wToMarker:  delta(s[1], s[2], n, 0, 0),
		wIdle:      delta(s[2], s[3], n, 0, 0),
		wDeletion:  delta(s[3], s[4], n, 0, own),
		wLifecycle: delta(s[0], s[4], n, own, own),
	}
}

// memorySummary summarizes the per-VMI memory figures.
func memorySummary(res *lifecycleResult) {
	var over, qemu, total []float64
	for _, m := range res.Memory {
		over, qemu, total = append(over, m.Overhead), append(qemu, m.QEMU), append(total, m.Total)
	}
	res.Overhead, res.QEMURSS, res.TotalRSS = summarizeNumbers(over), summarizeNumbers(qemu), summarizeNumbers(total)
}
