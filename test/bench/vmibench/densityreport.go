package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/hostproc"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// densityGateP95 is KubeVirt's density gate: creation -> Running p95 of 100 VMIs created
// 100 ms apart at most 60 s.
const densityGateP95 = 60

// densityTargets are the for the density run.
func densityTargets(d densityResult) []target {
	r, f := d.Run, d.Floor
	return []target{
		{Name: fmt.Sprintf("creation -> Running p95, %d VMIs %.0f ms apart", r.VMIs, d.IntervalMS), Value: r.CreateToRunning.P95,
			Limit: densityGateP95, Unit: "s", Met: r.CreateToRunning.P95 <= densityGateP95,
			FloorRatio: ratio(r.CreateToRunning.P95, f.StartReturned.P95), Note: "KubeVirt's density gate; ratio against the floor's Start returned p95"},
		{Name: fmt.Sprintf("VMIs that ran, of the %d asked", d.Asked), Value: float64(r.VMIs), Limit: float64(d.Asked), Unit: "VMIs",
			Met: r.VMIs >= d.Asked, AtLeast: true, Note: d.fitSentence()},
	}
}

// densityReport writes density.txt and density.json.
func densityReport(c config, d densityResult, elapsed time.Duration) error {
	ts := densityTargets(d)
	doc := phaseDoc(fmt.Sprintf("Density: vmi-tiny VMIs created %.0f ms apart on vireo-local's nodes (TCG) against as many domains started so on fresh session libvirtds, in the same run",
		d.IntervalMS), d, ts, elapsed)
	return measure.WriteResults(c.out, "density", doc, func(w io.Writer) {
		r, f := d.Run, d.Floor
		fmt.Fprintf(w, "Density: %d vmi-tiny VMIs (%.0f MiB guest, 1 vCPU under TCG, CPU request %s) created %.0f ms apart on vireo-local's %d nodes,\n",
			r.VMIs, d.GuestMemoryMiB, d.CPURequest, d.IntervalMS, len(r.PerNode))
		fmt.Fprintf(w, "against %d domains started %.0f ms apart, each on a fresh session libvirtd (the floor), on this machine (%d CPUs) in the same run.\n",
			f.Domains, d.IntervalMS, runtime.NumCPU())
		fmt.Fprintf(w, "How many: %s.\n\n", d.fitSentence())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "seconds\tp50\tp95\tmax\tfloor p50\tp95\tmax\tratio p50\tp95\t")
		row := func(name string, v, fl durations) {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", name, v.P50, v.P95, v.Max, fl.P50, fl.P95, fl.Max,
				ratio(v.P50, fl.P50), ratio(v.P95, fl.P95))
		}
		row("creation -> Running (floor: Start returned)", r.CreateToRunning, f.StartReturned)
		row("creation -> guest marker (floor: Start -> marker)", r.CreateToMarker, f.Marker)
		for _, ms := range milestoneOrder {
			if m, ok := r.Milestones[ms]; ok && m.N > 0 && ms != msRunning && ms != msMarker {
				fmt.Fprintf(tw, "  creation -> %s\t%.2f\t%.2f\t%.2f\t\t\t\t\t\t\n", ms, m.P50, m.P95, m.Max)
			}
		}
		row("deletion -> VMI gone", r.DeleteToGone, durations{})
		_ = tw.Flush()
		fmt.Fprintln(w)
		densityMemoryLines(w, d)
		if r.IdleCPU != nil {
			fmt.Fprintf(w, "Idle CPU over %.0f s, all guests booted: the machine %.0f%% busy (of all CPUs); per VMI p50 QEMU %.1f%%, libvirtd %.2f%%, launcher %.2f%%.\n",
				r.IdleCPU.Window, r.IdleCPU.HostBusy, r.IdleCPU.QEMU.P50, r.IdleCPU.Libvirtd.P50, r.IdleCPU.Launcher.P50)
		}
		if wr, ok := r.Writes[wToRunning]; ok {
			fmt.Fprintf(w, "VMI writes creation -> Running: %.2f per VMI (%.2f by Vireo); Pod writes %.2f per VMI.\n", wr.VMIPerVMI, wr.ByVireoPerVMI, wr.PodWritesPerVMI)
		}
		fmt.Fprintf(w, "VMIs per node: %v. Load average before: %s.\n", r.PerNode, r.LoadAvg)
		if len(r.Leftovers) > 0 {
			fmt.Fprintf(w, "Processes LEFT 30 s after the VMIs were gone: %v\n", r.Leftovers)
		}
		targetLines(w, ts)
		fmt.Fprintf(w, "\nEach VMI's times are from its own create request; each floor domain's from the moment its Start call was due.\n")
		fmt.Fprintf(w, "Percentiles are nearest-rank. Density phase: %.0f s.\n", elapsed.Seconds())
	})
}

// densityMemoryLines writes the per-VM and whole-machine memory of the run and its floor.
func densityMemoryLines(w io.Writer, d densityResult) {
	r, f := d.Run, d.Floor
	mib := func(b int64) float64 { return float64(b) / hostproc.MiB }
	perVM := func(before, after hostproc.HostMemory, n int) float64 {
		return ratio(mib(after.Used()-before.Used()), float64(n))
	}
	fmt.Fprintf(w, "Memory per VMI (MiB): total RSS p50 %.0f, max %.0f (launcher, libvirtd, QEMU, containerd shim, pause); overhead beyond the %.0f MiB guest p50 %.0f, max %.0f.\n",
		r.TotalRSS.P50, r.TotalRSS.Max, d.GuestMemoryMiB, r.Overhead.P50, r.Overhead.Max)
	fmt.Fprintf(w, "Floor per domain (MiB): libvirtd RSS p50 %.0f, QEMU RSS p50 %.0f.\n", f.LibvirtdRSS.P50, f.QEMURSS.P50)
	fmt.Fprintf(w, "The machine (MemTotal - MemAvailable, of %.1f GiB): Vireo %.1f GiB before the creates, %.1f GiB with all %d running: %.0f MiB per VMI;\n",
		mib(r.MachineBefore.Total)/1024, mib(r.MachineBefore.Used())/1024, mib(r.MachineRunning.Used())/1024, r.VMIs,
		perVM(r.MachineBefore, r.MachineRunning, r.VMIs))
	fmt.Fprintf(w, "  floor %.1f GiB before its daemons, %.1f GiB with all %d running: %.0f MiB per domain (Vireo's installation idle beside it).\n",
		mib(d.FloorBefore.Used())/1024, mib(f.MachineRunning.Used())/1024, f.Domains, perVM(d.FloorBefore, f.MachineRunning, f.Domains))
	if each := perVM(r.MachineBefore, r.MachineRunning, r.VMIs); each > 0 {
		room := mib(r.MachineBefore.Available-densityReserve) / each
		fmt.Fprintf(w, "By that measured use, the memory this machine had free before the creates holds about %.0f such VMIs (keeping %d MiB);\n",
			room, densityReserve>>20)
		fmt.Fprintf(w, "  the scheduler places by the launcher Pods' requests (%.0f MiB each: the guest and the default overhead) on nodes that split the host.\n",
			d.Fit.PodMemoryMiB)
	}
}
