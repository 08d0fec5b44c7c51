package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// The density run is KubeVirt's density gate in shape: many of the smallest guest that boots,
// created one after another a fixed interval apart, creation -> Running p50/p95 (KubeVirt's
// gate: p95 at most 60 s), against as many domains started the same interval apart on fresh
// session libvirtds in the same run. It creates at most what the nodes can schedule (by the
// launcher Pods' requests) and stops early when the machine runs short of memory; the report
// names the limit that applied.

// densityReserve is the machine's available memory the density run keeps: it creates no more
// VMIs once MemAvailable falls below it.
const densityReserve = 1536 << 20

// densityResult is what the density run measured.
type densityResult struct {
	Asked          int     `json:"asked"`
	IntervalMS     float64 `json:"intervalMilliseconds"`
	GuestMemoryMiB float64 `json:"guestMemoryMiB"`
	CPURequest     string  `json:"cpuRequest"`
	Fit            podFit  `json:"fit"`
	// Run is Vireo's run (Run.VMIs were created); Floor the same number of bare domains.
	Run   lifecycleResult `json:"vireo"`
	Floor floorResult     `json:"floor"`
	// FloorBefore is the machine's memory before the floor's daemons started.
	FloorBefore hostproc.HostMemory `json:"floorMachineMemoryBefore"`
}

// podFit is how many launcher Pods the nodes can take by their allocatable resources, less the
// requests of the Pods already on them.
type podFit struct {
	PodMemoryMiB float64        `json:"launcherPodMemoryRequestMiB"`
	PodMilliCPU  int64          `json:"launcherPodCPURequestMilli"`
	PerNode      map[string]int `json:"perNode"`
	Total        int            `json:"total"`
	// Binding names, per node, the resource that ran out first.
	Binding map[string]string `json:"binding"`
}

// density runs the density phase: Vireo's run, then its floor.
func (e *env) density(ctx context.Context) (densityResult, error) {
	res := densityResult{Asked: e.c.density, IntervalMS: float64(e.c.densityInterval) / float64(time.Millisecond), CPURequest: e.c.densityCPU}
	guest := e.template.Spec.Domain.Resources.Requests[v1.ResourceMemory]
	res.GuestMemoryMiB = float64(guest.Value()) / hostproc.MiB
	podMemory := guest.DeepCopy()
	podMemory.Add(launcherpod.DefaultMemoryOverhead)
	fit, err := e.fitLaunchers(ctx, podMemory, resource.MustParse(e.c.densityCPU))
	if err != nil {
		return res, err
	}
	res.Fit = fit
	n := min(e.c.density, fit.Total)
	if n < 1 {
		return res, fmt.Errorf("density: no launcher Pod of %s memory and %s CPU fits the nodes (%v)", podMemory.String(), e.c.densityCPU, fit.Binding)
	}
	say("density: %d VMI(s) asked, %d fit the nodes' allocatable resources (%v)", e.c.density, fit.Total, fit.Binding)
	run, objs, err := e.lifecycle(ctx, runSpec{n: n, prefix: "density", idle: e.c.idle, interval: e.c.densityInterval,
		cpuRequest: e.c.densityCPU, minAvailable: densityReserve, timeout: e.c.densityTimeout})
	res.Run = run
	if err != nil {
		return res, fmt.Errorf("density, %d VMIs: %w", n, err)
	}
	if res.FloorBefore, err = hostproc.ReadHostMemory(); err != nil {
		return res, err
	}
	res.Floor, err = runFloor(ctx, objs, e.c.containerDiskFile(), floorSpec{tcgCacheMiB: e.c.tcgCacheMiB,
		interval: e.c.densityInterval, timeout: e.c.densityTimeout})
	if err != nil {
		return res, fmt.Errorf("density floor, %d domains: %w", len(objs), err)
	}
	return res, nil
}

// fitLaunchers counts the launcher Pods of podMemory and podCPU each node can still take: its
// allocatable memory, CPU and Pods less what the Pods on it request.
func (e *env) fitLaunchers(ctx context.Context, podMemory, podCPU resource.Quantity) (podFit, error) {
	fit := podFit{PodMemoryMiB: float64(podMemory.Value()) / hostproc.MiB, PodMilliCPU: podCPU.MilliValue(),
		PerNode: map[string]int{}, Binding: map[string]string{}}
	nodes, err := e.cl.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fit, err
	}
	pods, err := e.cl.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fit, err
	}
	for _, node := range nodes.Items {
		if !schedulable(&node) {
			continue
		}
		memory := node.Status.Allocatable.Memory().Value()
		cpu := node.Status.Allocatable.Cpu().MilliValue()
		slots := node.Status.Allocatable.Pods().Value()
		for _, p := range pods.Items {
			if p.Spec.NodeName != node.Name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			m, c := podRequests(&p)
			memory, cpu, slots = memory-m, cpu-c, slots-1
		}
		limits := map[string]int64{"memory": memory / max(podMemory.Value(), 1), "cpu": cpu / max(podCPU.MilliValue(), 1), "pods": slots}
		binding := slices.MinFunc([]string{"memory", "cpu", "pods"}, func(a, b string) int { return int(limits[a] - limits[b]) })
		n := int(max(limits[binding], 0))
		fit.PerNode[node.Name], fit.Binding[node.Name], fit.Total = n, binding, fit.Total+n
	}
	return fit, nil
}

// schedulable reports whether the scheduler places Pods on node: not cordoned, without
// NoSchedule taints.
func schedulable(node *corev1.Node) bool {
	if node.Spec.Unschedulable {
		return false
	}
	return !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
}

// podRequests is the memory (bytes) and CPU (millicores) p requests as the scheduler counts
// them: the sum of its containers, or its largest init container if more, plus its overhead.
func podRequests(p *corev1.Pod) (memory, milliCPU int64) {
	for _, c := range p.Spec.Containers {
		memory += c.Resources.Requests.Memory().Value()
		milliCPU += c.Resources.Requests.Cpu().MilliValue()
	}
	for _, c := range p.Spec.InitContainers {
		memory = max(memory, c.Resources.Requests.Memory().Value())
		milliCPU = max(milliCPU, c.Resources.Requests.Cpu().MilliValue())
	}
	memory += p.Spec.Overhead.Memory().Value()
	milliCPU += p.Spec.Overhead.Cpu().MilliValue()
	return memory, milliCPU
}

// fitSentence says what bounded the run's number of VMIs.
func (d densityResult) fitSentence() string {
	var nodes []string
	for _, name := range slices.Sorted(maps.Keys(d.Fit.PerNode)) {
		nodes = append(nodes, fmt.Sprintf("%s %d (%s)", name, d.Fit.PerNode[name], d.Fit.Binding[name]))
	}
	s := fmt.Sprintf("the nodes fit %d launcher Pods of %.0f MiB and %dm CPU: %s", d.Fit.Total, d.Fit.PodMemoryMiB,
		d.Fit.PodMilliCPU, strings.Join(nodes, ", "))
	switch {
	case d.Run.CreateStopped != "":
		return s + "; " + d.Run.CreateStopped
	case d.Run.VMIs < d.Asked:
		return s + fmt.Sprintf("; so %d of the %d asked were created", d.Run.VMIs, d.Asked)
	}
	return s + fmt.Sprintf("; all %d asked were created", d.Asked)
}
