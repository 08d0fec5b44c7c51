package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// report is scale.json; scale.txt renders it.
type report struct {
	Config  map[string]any `json:"config"`
	Started time.Time      `json:"started"`
	Sizes   []sizeResult   `json:"sizes"`
}

// sizeResult is one wave's measurements: Vireo's, and the CRD baseline's at the same size.
type sizeResult struct {
	VMIs  int           `json:"vmis"`
	Vireo targetResult  `json:"vireo"`
	CRD   *targetResult `json:"crd,omitempty"`
}

// targetResult is one target measured at one size.
type targetResult struct {
	// Created VMIs in this wave, how fast, and each create request's latency.
	Created          int           `json:"created"`
	CreateThroughput float64       `json:"createPerSecond"`
	Create           measure.Stats `json:"createRequest"`
	// ToRunning is creation (the create request's start) -> Running as a node agent's watch
	// delivered it (Vireo: through the controller, kube-scheduler, kubelet and node agent).
	ToRunning  measure.Stats `json:"creationToRunning"`
	NotRunning int           `json:"notRunning"`
	// Steps is when the VMIs passed each step on their way to Running (Vireo's full path).
	Steps []stepLatency `json:"steps,omitempty"`
	// Usage is memory, CPU and database sizes after the wave; AfterLists the same once the
	// lists were measured (its peak RSS, VmHWM, includes theirs).
	Usage      usage `json:"usage"`
	AfterLists usage `json:"usageAfterLists"`
	// Cores is each process's CPU over the wave (creation until every VMI Running), in cores;
	// HostBusy the machine's busy share then (1: both cores busy).
	Cores    map[string]float64 `json:"cores,omitempty"`
	HostBusy float64            `json:"hostBusy,omitempty"`
	// CPUPerVMIms is the CPU the processes of Cores spent per VMI of the wave (ms), and
	// SustainedRate the VMIs per second the machine's cores could take at that cost.
	CPUPerVMIms   float64                 `json:"cpuPerVMIMilliseconds,omitempty"`
	SustainedRate float64                 `json:"sustainedVMIsPerSecond,omitempty"`
	Queues        map[string]queueLatency `json:"controllerQueues,omitempty"`
	// WritesPerVMI are vireo-apiserver's VMI writes (create, update, patch, delete) over the
	// wave per VMI created, the harness's own create included; KubeWritesPerVMI
	// kube-apiserver's writes of Pods, events and access reviews; Series by verb and code.
	WritesPerVMI     float64            `json:"vmiWritesPerVMI,omitempty"`
	KubeWritesPerVMI float64            `json:"kubeWritesPerVMI,omitempty"`
	WriteSeries      map[string]float64 `json:"writeSeries,omitempty"`
	Lists            []listResult       `json:"lists"`
	// Fanout is from the start of a VMI write until the watch of the VMI's node delivered it.
	Fanout        measure.Stats `json:"watchFanout"`
	FanoutMissing int           `json:"watchFanoutMissing"`
	FanoutWrite   measure.Stats `json:"watchFanoutWrite"`
	// Direct says the wave's VMIs were written Running by the harness, not brought there
	// by the control path (directWave).
	Direct bool `json:"direct,omitempty"`
	// Restarts counts the restarts of Vireo's containers so far.
	Restarts int `json:"restarts"`
	// Problem is what broke, if anything.
	Problem string `json:"problem,omitempty"`
}

func (r *targetResult) created(cr creation, n int) {
	r.Created = n
	r.CreateThroughput = float64(n) / cr.wall.Seconds()
	r.Create = measure.Summarize(cr.latency, cr.wall)
}

func (r *targetResult) writes(before, after apimetrics.RequestCounts, n int) {
	r.WriteSeries = map[string]float64{}
	var vmi, kube float64
	for k, v := range after {
		d := v - before[k]
		if d == 0 {
			continue
		}
		r.WriteSeries[k.String()] = d
		if k.Server == "vireo-apiserver" {
			vmi += d
		} else {
			kube += d
		}
	}
	r.WritesPerVMI, r.KubeWritesPerVMI = vmi/float64(n), kube/float64(n)
}

func (r *targetResult) fanout(p *probes, first, count int, writeLat []time.Duration) {
	delivered, missing := p.result(first, first+count)
	r.Fanout, r.FanoutMissing, r.FanoutWrite = latencies(delivered), missing, latencies(writeLat)
	say("  watch fan-out: %d delivered, p50 %.0f ms, p99 %.0f ms, %d missing", r.Fanout.Ops, r.Fanout.P50ms, r.Fanout.P99ms, missing)
}

// fullListProtobuf is the unpaged list of every VMI in protobuf (nil when not measured).
func (r *targetResult) fullListProtobuf() *listResult {
	for i := range r.Lists {
		if l := &r.Lists[i]; l.Protobuf && !l.Paged && l.Name == r.Lists[0].Name {
			return l
		}
	}
	return nil
}

// describe is the configuration as the report records it.
func (c config) describe() map[string]any {
	return map[string]any{"vmis": c.vmis, "nodes": c.nodes, "ratePerSecond": c.rate, "creators": c.creators,
		"probes": c.probes, "namespaces": c.namespaces, "crdBaseline": c.crd, "waves": waves(c.vmis), "controllerWorkers": c.controllerWorkers, "fullPath": c.fullPath}
}

// write writes scale.json, scale.txt and the plots.
func (r *report) write(dir string) error {
	if err := measure.WriteResults(dir, "scale", r, r.table); err != nil {
		return err
	}
	return r.plot(dir)
}

const mib = 1 << 20

// table renders the report as text.
func (r *report) table(w io.Writer) {
	fmt.Fprintf(w, "Vireo at scale: %v VMIs on %v simulated nodes, created %v/s by %v clients (scalebench, %s)\n",
		r.Config["vmis"], r.Config["nodes"], r.Config["ratePerSecond"], r.Config["creators"], r.Started.Format(time.RFC3339))
	fmt.Fprintln(w, "vireo: aggregated vireo-apiserver, embedded etcd; crd: the same kind as a CRD with webhooks in kube-apiserver's etcd")
	for _, s := range r.Sizes {
		fmt.Fprintf(w, "\n== %d VMIs ==\n", s.VMIs)
		row := func(name string, f func(t *targetResult) string) {
			crd := "-"
			if s.CRD != nil {
				crd = f(s.CRD)
			}
			fmt.Fprintf(w, "%-66s %22s %22s\n", name, f(&s.Vireo), crd)
		}
		fmt.Fprintf(w, "%-66s %22s %22s\n", "", "vireo", "crd")
		row("create throughput (VMIs/s)", func(t *targetResult) string { return fmt.Sprintf("%.0f", t.CreateThroughput) })
		row("create request p50 / p99 (ms)", func(t *targetResult) string { return fmt.Sprintf("%.0f / %.0f", t.Create.P50ms, t.Create.P99ms) })
		row("creation -> Running p50 / p99 (s)", func(t *targetResult) string {
			if t.Direct {
				return "written directly"
			}
			if t.ToRunning.Ops == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f / %.1f", t.ToRunning.P50ms/1000, t.ToRunning.P99ms/1000)
		})
		row("watch fan-out p50 / p99 (ms)", func(t *targetResult) string {
			return fmt.Sprintf("%.0f / %.0f (%d lost)", t.Fanout.P50ms, t.Fanout.P99ms, t.FanoutMissing)
		})
		row("RSS vireo-apiserver+etcd: anon + file (MiB)", func(t *targetResult) string {
			m := t.Usage.Memory["vireo-apiserver"]
			return fmt.Sprintf("%d: %d + %d", m.RSS/mib, m.Anon/mib, m.File/mib)
		})
		row("peak RSS (VmHWM) after the lists: vireo-apiserver+etcd / kube-apiserver (MiB)", func(t *targetResult) string {
			m := t.AfterLists.Memory
			return fmt.Sprintf("%d / %d", m["vireo-apiserver"].Peak/mib, m["kube-apiserver"].Peak/mib)
		})
		row("RSS kube-apiserver / etcd (MiB)", func(t *targetResult) string {
			return fmt.Sprintf("%d / %d", t.Usage.Memory["kube-apiserver"].RSS/mib, t.Usage.Memory["etcd"].RSS/mib)
		})
		row("etcd db vireo / cluster (MiB)", func(t *targetResult) string {
			return fmt.Sprintf("%d / %d", t.Usage.DB["vireo"]/mib, t.Usage.DB["cluster"]/mib)
		})
		for i := range s.Vireo.Lists {
			lv := s.Vireo.Lists[i]
			row(fmt.Sprintf("list %s%s p50/p99 ms", lv.Name, lv.suffix()), func(t *targetResult) string {
				if i >= len(t.Lists) {
					return "-"
				}
				return fmt.Sprintf("%.0f / %.0f (%d)", t.Lists[i].P50ms, t.Lists[i].P99ms, t.Lists[i].Items)
			})
		}
		v := &s.Vireo
		if v.Direct {
			fmt.Fprintln(w, "vireo: writes per VMI not counted (written directly: one create and one status patch each)")
		} else {
			fmt.Fprintf(w, "vireo: %.2f VMI writes per VMI; kube-apiserver: %.2f writes per VMI (Pods, events, access reviews)\n", v.WritesPerVMI, v.KubeWritesPerVMI)
		}
		for _, k := range slices.Sorted(maps.Keys(v.WriteSeries)) {
			fmt.Fprintf(w, "  %-70s %8.0f\n", k, v.WriteSeries[k])
		}
		if len(v.Cores) > 0 {
			var parts []string
			for _, name := range slices.Sorted(maps.Keys(v.Cores)) {
				parts = append(parts, fmt.Sprintf("%s %.2f", name, v.Cores[name]))
			}
			fmt.Fprintf(w, "CPU while the wave ran (cores; the machine %.0f%% busy): %s\n", v.HostBusy*100, strings.Join(parts, ", "))
			fmt.Fprintf(w, "CPU per VMI through the control path: %.0f ms, so this machine's %d cores take at most %.0f VMIs/s\n",
				v.CPUPerVMIms, runtime.NumCPU(), v.SustainedRate)
		}
		for _, name := range slices.Sorted(maps.Keys(v.Queues)) {
			q := v.Queues[name]
			fmt.Fprintf(w, "vireo-controller queue %-22s %8.0f adds, %.0f retries, queued p50 %.1f ms p99 %.1f ms, work p50 %.1f ms p99 %.1f ms (10 s: the histograms' last bound, or more)\n",
				name, q.Adds, q.Retries, q.QueueP50ms, q.QueueP99ms, q.WorkP50ms, q.WorkP99ms)
		}
		for _, st := range v.Steps {
			fmt.Fprintf(w, "creation -> %-34s p50 %6.1f s  p90 %6.1f s  p99 %6.1f s  (%d VMIs)\n", st.Step, st.P50s, st.P90s, st.P99s, st.Count)
		}
		if v.Problem != "" {
			fmt.Fprintln(w, "PROBLEM:", v.Problem)
		}
		if s.CRD != nil && len(s.CRD.Lists) > 0 && len(v.Lists) > 0 && v.Lists[0].P50ms > 0 {
			fmt.Fprintf(w, "full list, unpaged: the CRD's p50 is %.1fx Vireo's in JSON", s.CRD.Lists[0].P50ms/v.Lists[0].P50ms)
			if pb := v.fullListProtobuf(); pb != nil && pb.P50ms > 0 {
				fmt.Fprintf(w, ", %.1fx Vireo's in protobuf", s.CRD.Lists[0].P50ms/pb.P50ms)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "\n"+strings.TrimSpace(notes))
}

// notes explain how the figures were taken.
const notes = `
How: every figure is taken in one process against one installation. creation -> Running runs
from the start of a VMI's create request until the watch of its node's simulated agent delivers
it Running. watch fan-out runs from the start of a merge patch of one VMI's annotation until the
watch of the VMI's node (vireo: field selector status.nodeName, as the node agent; crd: a node
label, as KubeVirt's virt-handler selects by kubevirt.io/nodeName) delivers it; one watch per node.
Lists are timed to their last byte, unpaged and paged by 500, in JSON and (Vireo) in protobuf. RSS is the process's resident
memory after the wave, anonymous (heap, stacks) + mapped file pages (vireo-apiserver's: the
embedded etcd's database, which the kernel drops under pressure); kube-apiserver and its etcd hold
the launcher Pods of Vireo's VMIs too.
Waves above -full-path VMIs ("written directly") create VMIs as fast as the clients go and
write each one's Running status (VMI 0's, on its node) in one status patch, with
vireo-controller stopped: they measure the API at size, not the control path, which this
machine's 2 cores bring to about 30 VMIs a second.
Percentiles are nearest-rank: with fewer than 100 samples p99 is the slowest.`

// latencies summarizes ds with no throughput (they were not taken back to back).
func latencies(ds []time.Duration) measure.Stats {
	s := measure.Summarize(ds, time.Second)
	s.Throughput = 0
	return s
}
