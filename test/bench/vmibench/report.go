package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/hostproc"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// target is one of the targets and whether the run met it.
type target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	Met   bool    `json:"met"`
	// AtLeast: the value must reach the limit rather than stay below it.
	AtLeast bool `json:"atLeast,omitempty"`
	// FloorRatio is the figure divided by the floor's counterpart (0: none).
	FloorRatio float64 `json:"floorRatio,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// targets evaluates the targets on the largest run.
func targets(m measured) []target {
	r, f := m.runs[len(m.runs)-1], m.floors[len(m.floors)-1]
	w := r.Writes[wToRunning]
	floorMem := f.LibvirtdRSS.P50 + f.QEMURSS.P50
	n := fmt.Sprintf("%d VMIs", r.VMIs)
	ts := []target{
		{Name: "creation -> Running p50, " + n, Value: r.CreateToRunning.P50, Limit: 3, Unit: "s", Met: r.CreateToRunning.P50 <= 3,
			FloorRatio: ratio(r.CreateToRunning.P50, f.StartReturned.P50), Note: "ratio against the floor's Start returned"},
		{Name: "creation -> Running p95, " + n, Value: r.CreateToRunning.P95, Limit: 6, Unit: "s", Met: r.CreateToRunning.P95 <= 6,
			FloorRatio: ratio(r.CreateToRunning.P95, f.StartReturned.P95), Note: "ratio against the floor's Start returned"},
		{Name: "VMI writes creation -> Running, per VMI", Value: w.VMIPerVMI, Limit: 4, Unit: "writes", Met: w.VMIPerVMI <= 4,
			Note: fmt.Sprintf("including the user's create; %.1f by Vireo; %.1f answered 409 Conflict", w.ByVireoPerVMI, w.Conflicts/float64(r.VMIs))},
		{Name: "memory overhead per VM (max)", Value: r.Overhead.Max, Limit: 100, Unit: "MiB", Met: r.Overhead.Max <= 100,
			FloorRatio: ratio(r.TotalRSS.P50, floorMem), Note: "launcher+libvirtd+QEMU+containerd shim+pause RSS - guest RAM; ratio: total RSS p50 against the floor's libvirtd+QEMU; " + pssNote(m)},
	}
	for i := range m.runs {
		ts = append(ts, floorRatioTarget(m, i))
	}
	return ts
}

// floorRatioTarget is the goal for run i: creation -> Running p50 at most 1.5x the
// floor's Start. Its note says how much of that the bare Pod alone takes.
func floorRatioTarget(m measured, i int) target {
	r, f, p := m.runs[i], m.floors[i], m.podFloors[i]
	v := ratio(r.CreateToRunning.P50, f.StartReturned.P50)
	return target{Name: fmt.Sprintf("creation -> Running p50 / floor, %d VMI(s)", r.VMIs), Value: v, Limit: 1.5, Unit: "x", Met: v > 0 && v <= 1.5,
		Note: fmt.Sprintf("%.2f s against the floor's Start %.2f s; a bare Pod alone takes %.2f s (%.1fx the floor's Start), with one emptyDir %.2f s (%.1fx); that Pod + Start %.2f s (Vireo's Running is %.2fx that)",
			r.CreateToRunning.P50, f.StartReturned.P50, p.CreateToRunning.P50, ratio(p.CreateToRunning.P50, f.StartReturned.P50),
			p.OneVolume.P50, ratio(p.OneVolume.P50, f.StartReturned.P50), podPlusStart(m, i).P50, ratio(r.CreateToRunning.P50, podPlusStart(m, i).P50))}
}

// pssNote gives the overhead by PSS, which counts the pages VMs share (binaries, libraries,
// the shim's text) once among them rather than once per VM.
func pssNote(m measured) string {
	var parts []string
	for _, r := range m.runs {
		var pss []float64
		for _, v := range r.Memory {
			pss = append(pss, v.OverheadPSS)
		}
		parts = append(parts, fmt.Sprintf("%.1f MiB with %d VM(s)", summarizeNumbers(pss).Max, r.VMIs))
	}
	return "by PSS (max): " + strings.Join(parts, ", ")
}

func report(c config, e *env, m measured) error {
	ts := targets(m)
	doc := map[string]any{
		"benchmark":        "VMI lifecycle on vireo-local (2 nodes, TCG): creation -> Running -> guest marker -> deletion, writes, memory and idle CPU, against the floor (fresh session libvirtd starting the same domain XML)",
		"time":             time.Now().UTC().Format(time.RFC3339),
		"cpus":             runtime.NumCPU(),
		"sizes":            c.sizes,
		"runs":             m.runs,
		"floors":           m.floors,
		"podFloors":        m.podFloors,
		"floorAltTCGCache": map[string]any{"tcgCacheMiB": c.altTCGCacheMiB, "floor": m.altCache},
		"targets":          ts,
		"qemuArgsDiff":     m.argsCompare,
		"metricsSource":    e.scraper.Method(),
		"elapsedSeconds":   m.elapsed.Seconds(),
		"vmActions":        m.vmActions,
		"coldStart":        m.coldStart,
	}
	return measure.WriteResults(c.out, "vmi-lifecycle", doc, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(w, "VMI lifecycle on vireo-local: 2 nodes, %d CPUs, TCG; vmi-tiny (1 vCPU, 128 MiB); VMIs created at once\n\n", runtime.NumCPU())
		latencyTable(tw, m)
		milestoneTable(tw, m)
		writesTable(tw, m)
		memoryTable(tw, m)
		cpuTable(tw, m)
		_ = tw.Flush()
		startCPUTable(w, m.runs)
		altCacheLine(w, c, m)
		vmActionsTable(w, m.vmActions)
		coldStartLines(w, m)
		targetLines(w, ts)
		fmt.Fprintf(w, "\nThe floor: per VMI a fresh session libvirtd (uid 107, own network namespace) starts the domain built from the same VMI with launcher/disks and launcher/domain;\n")
		fmt.Fprintf(w, "all daemons start and probe QEMU's capabilities first, then all Start calls are made at once. ")
		if m.argsCompare == "" {
			fmt.Fprintf(w, "Its QEMU command line equals the launcher's apart from paths.\n")
		} else {
			fmt.Fprintf(w, "Its QEMU command line differs from the launcher's: %s\n", m.argsCompare)
		}
		fmt.Fprintf(w, "Writes: apiserver_request_total of vireo-apiserver (%s) and kube-apiserver, as deltas.\n", e.scraper.Method())
		for _, r := range m.runs {
			fmt.Fprintf(w, "%d VMI(s): load average before: %s; VMIs per node: %v", r.VMIs, r.LoadAvg, r.PerNode)
			if len(r.Leftovers) > 0 {
				fmt.Fprintf(w, "; processes LEFT 30 s after the VMIs were gone: %v", r.Leftovers)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Percentiles are nearest-rank (p95 of 10 is the slowest). Whole benchmark: %.0f s.\n", m.elapsed.Seconds())
	})
}

// podPlusStart is the sum of run i's start of a Pod with one volume (a launcher Pod cannot do
// with less) and its floor's Start, percentile by percentile: what a VMI's start costs if
// Vireo added nothing to the kubelet's and libvirt's.
func podPlusStart(m measured, i int) durations {
	p, f := m.podFloors[i].OneVolume, m.floors[i].StartReturned
	return durations{N: p.N, P50: p.P50 + f.P50, P95: p.P95 + f.P95, Max: p.Max + f.Max}
}

// header writes a row of column titles, one per run size.
func header(tw io.Writer, title string, m measured, cols ...string) {
	fmt.Fprintf(tw, "%s\t", title)
	for _, r := range m.runs {
		for _, c := range cols {
			fmt.Fprintf(tw, "%s %d\t", c, r.VMIs)
		}
	}
	fmt.Fprintln(tw)
}

func latencyTable(tw io.Writer, m measured) {
	header(tw, "seconds", m, "p50", "p95")
	row := func(name string, get func(i int) durations) {
		fmt.Fprintf(tw, "%s\t", name)
		for i := range m.runs {
			d := get(i)
			fmt.Fprintf(tw, "%.2f\t%.2f\t", d.P50, d.P95)
		}
		fmt.Fprintln(tw)
	}
	row("creation -> Running", func(i int) durations { return m.runs[i].CreateToRunning })
	row("creation -> guest marker", func(i int) durations { return m.runs[i].CreateToMarker })
	row("deletion -> VMI gone", func(i int) durations { return m.runs[i].DeleteToGone })
	row("floor: libvirtd ready (before)", func(i int) durations { return m.floors[i].DaemonReady })
	row("floor: capabilities probe (before)", func(i int) durations { return m.floors[i].Capabilities })
	row("floor: Start returned", func(i int) durations { return m.floors[i].StartReturned })
	row("floor: Start -> guest marker", func(i int) durations { return m.floors[i].Marker })
	row("floor: fresh libvirtd -> marker", func(i int) durations { return m.floors[i].FreshTotal })
	row("floor: a bare Pod, creation -> Running", func(i int) durations { return m.podFloors[i].CreateToRunning })
	row("floor: a Pod with an emptyDir, -> Running", func(i int) durations { return m.podFloors[i].OneVolume })
	ratioRow := func(name string, a, b func(i int) durations) {
		fmt.Fprintf(tw, "%s\t", name)
		for i := range m.runs {
			fmt.Fprintf(tw, "%.1fx\t%.1fx\t", ratio(a(i).P50, b(i).P50), ratio(a(i).P95, b(i).P95))
		}
		fmt.Fprintln(tw)
	}
	ratioRow("Running / floor Start returned", func(i int) durations { return m.runs[i].CreateToRunning }, func(i int) durations { return m.floors[i].StartReturned })
	ratioRow("bare Pod / floor Start returned", func(i int) durations { return m.podFloors[i].CreateToRunning }, func(i int) durations { return m.floors[i].StartReturned })
	ratioRow("Running / (emptyDir Pod + floor Start)", func(i int) durations { return m.runs[i].CreateToRunning }, func(i int) durations { return podPlusStart(m, i) })
	ratioRow("marker / floor Start -> marker", func(i int) durations { return m.runs[i].CreateToMarker }, func(i int) durations { return m.floors[i].Marker })
	ratioRow("marker / floor fresh -> marker", func(i int) durations { return m.runs[i].CreateToMarker }, func(i int) durations { return m.floors[i].FreshTotal })
	fmt.Fprintln(tw, "\t")
}

func milestoneTable(tw io.Writer, m measured) {
	header(tw, "from creation, seconds", m, "p50", "p95")
	for _, ms := range milestoneOrder {
		fmt.Fprintf(tw, "%s\t", ms)
		for _, r := range m.runs {
			if d, ok := r.Milestones[ms]; ok && d.N > 0 {
				fmt.Fprintf(tw, "%.2f\t%.2f\t", d.P50, d.P95)
			} else {
				fmt.Fprint(tw, "-\t-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	var keys []string
	for k := range m.runs[len(m.runs)-1].PhaseStamps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return phaseRank(a) - phaseRank(b) })
	fmt.Fprintln(tw, "phaseTransitionTimestamps (whole s)\t")
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t", k)
		for _, r := range m.runs {
			d := r.PhaseStamps[k]
			fmt.Fprintf(tw, "%.0f\t%.0f\t", d.P50, d.P95)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "\t")
}

func phaseRank(interval string) int {
	for i, p := range []string{"creation", "Pending", "Scheduling", "Scheduled", "Running", "Succeeded", "Failed"} {
		if strings.HasPrefix(interval, p+" ") {
			return i
		}
	}
	return 99
}

func writesTable(tw io.Writer, m measured) {
	header(tw, "VMI writes per VMI", m, "VMIs")
	rows := []struct{ name, bucket string }{
		{"creation -> Running (with the create)", wToRunning}, {"Running -> guest marker", wToMarker},
		{"idle window (steady state)", wIdle}, {"deletion -> gone (with the delete)", wDeletion}, {"whole lifecycle", wLifecycle},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t", row.name)
		for _, r := range m.runs {
			fmt.Fprintf(tw, "%.1f\t", r.Writes[row.bucket].VMIPerVMI)
		}
		fmt.Fprintln(tw)
	}
	line := func(name string, get func(w writes) float64) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, r := range m.runs {
			fmt.Fprintf(tw, "%.1f\t", get(r.Writes[wLifecycle]))
		}
		fmt.Fprintln(tw)
	}
	line("lifecycle, by Vireo only", func(w writes) float64 { return w.ByVireoPerVMI })
	line("lifecycle, 409 conflicts (all VMIs)", func(w writes) float64 { return w.Conflicts })
	line("lifecycle, Pod writes per VMI (kube-apiserver)", func(w writes) float64 { return w.PodWritesPerVMI })
	fmt.Fprintln(tw, "\t")
}

func memoryTable(tw io.Writer, m measured) {
	fmt.Fprintf(tw, "MiB per VM\t")
	for _, r := range m.runs {
		fmt.Fprintf(tw, "p50 %d\tmax %d\t", r.VMIs, r.VMIs)
	}
	fmt.Fprintln(tw)
	row := func(name string, get func(v vmiMemory) float64) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, r := range m.runs {
			var vals []float64
			for _, v := range r.Memory {
				vals = append(vals, get(v))
			}
			s := summarizeNumbers(vals)
			fmt.Fprintf(tw, "%.1f\t%.1f\t", s.P50, s.Max)
		}
		fmt.Fprintln(tw)
	}
	row("launcher RSS", func(v vmiMemory) float64 { return v.Launcher })
	row("libvirtd RSS", func(v vmiMemory) float64 { return v.Libvirtd })
	row("QEMU RSS", func(v vmiMemory) float64 { return v.QEMU })
	row("containerd shim RSS", func(v vmiMemory) float64 { return v.Shim })
	row("pause RSS", func(v vmiMemory) float64 { return v.Pause })
	row("  of which guest RAM resident", func(v vmiMemory) float64 { return float64(v.Regions.GuestRAMResident) / hostproc.MiB })
	row("  of which TCG tb-cache resident", func(v vmiMemory) float64 { return float64(v.Regions.TBCacheResident) / hostproc.MiB })
	row("total RSS", func(v vmiMemory) float64 { return v.Total })
	row("total PSS", func(v vmiMemory) float64 { return v.TotalPSS })
	row("overhead: total RSS - 128 MiB", func(v vmiMemory) float64 { return v.Overhead })
	row("overhead: total RSS - resident guest RAM", func(v vmiMemory) float64 { return v.OverheadResident })
	// PSS divides the pages VMs share (the images' binaries and libraries, the shim's text)
	// among them: what one more VM costs the node.
	row("overhead: total PSS - 128 MiB", func(v vmiMemory) float64 { return v.OverheadPSS })
	fmt.Fprintf(tw, "floor: libvirtd RSS\t")
	for _, f := range m.floors {
		fmt.Fprintf(tw, "%.1f\t%.1f\t", f.LibvirtdRSS.P50, f.LibvirtdRSS.Max)
	}
	fmt.Fprintf(tw, "\nfloor: QEMU RSS\t")
	for _, f := range m.floors {
		fmt.Fprintf(tw, "%.1f\t%.1f\t", f.QEMURSS.P50, f.QEMURSS.Max)
	}
	fmt.Fprintln(tw, "\n\t")
}

func cpuTable(tw io.Writer, m measured) {
	r := m.runs[len(m.runs)-1]
	if r.IdleCPU == nil {
		return
	}
	c := r.IdleCPU
	fmt.Fprintf(tw, "idle CPU, %d guests booted, %.0f s (%% of a core)\tper VMI p50\tper VMI max\tsum\t\n", r.VMIs, c.Window)
	fmt.Fprintf(tw, "launcher\t%.2f\t%.2f\t%.2f\t\n", c.Launcher.P50, c.Launcher.Max, c.LauncherSum)
	fmt.Fprintf(tw, "libvirtd\t%.2f\t%.2f\t%.2f\t\n", c.Libvirtd.P50, c.Libvirtd.Max, c.LibvirtdSum)
	fmt.Fprintf(tw, "QEMU\t%.2f\t%.2f\t%.2f\t\n", c.QEMU.P50, c.QEMU.Max, c.QEMUSum)
	var agents []string
	var sum float64
	for n, v := range c.NodeAgents {
		agents = append(agents, fmt.Sprintf("%s %.2f", n, v))
		sum += v
	}
	slices.Sort(agents)
	fmt.Fprintf(tw, "node agents (%s)\t\t\t%.2f\t\n", strings.Join(agents, ", "), sum)
	fmt.Fprintf(tw, "whole machine busy (%% of all %d CPUs)\t\t\t%.1f\t\n", runtime.NumCPU(), c.HostBusy)
	fmt.Fprintln(tw, "\t")
}

// altCacheLine compares the smallest run's floor with the launcher's TCG cache and with the
// alternative size.
func altCacheLine(w io.Writer, c config, m measured) {
	if m.altCache == nil {
		return
	}
	a, b := m.floors[0], *m.altCache
	fmt.Fprintf(w, "TCG cache, floor with %d domain(s): %d MiB -> QEMU RSS %.1f MiB (tb-cache resident %.1f), Start -> marker %.2f s; %d MiB -> QEMU RSS %.1f MiB (tb-cache resident %.1f), Start -> marker %.2f s\n\n",
		a.Domains, c.tcgCacheMiB, a.QEMURSS.P50, float64(a.QEMURegions.TBCacheResident)/hostproc.MiB, a.Marker.P50,
		c.altTCGCacheMiB, b.QEMURSS.P50, float64(b.QEMURegions.TBCacheResident)/hostproc.MiB, b.Marker.P50)
}

// phaseDoc is the JSON document of a phase's report: what it measured (benchmark), when, on how
// many CPUs, its result and targets, and how long it took.
func phaseDoc(benchmark string, result any, ts []target, elapsed time.Duration) map[string]any {
	return map[string]any{
		"benchmark":      benchmark,
		"time":           time.Now().UTC().Format(time.RFC3339),
		"cpus":           runtime.NumCPU(),
		"result":         result,
		"targets":        ts,
		"elapsedSeconds": elapsed.Seconds(),
	}
}

func targetLines(w io.Writer, ts []target) {
	fmt.Fprintln(w, "Targets (the issue's):")
	for _, t := range ts {
		verdict := "NOT met"
		if t.Met {
			verdict = "met"
		}
		fr := ""
		if t.FloorRatio != 0 {
			fr = fmt.Sprintf(", %.1fx the floor", t.FloorRatio)
		}
		bound := "<="
		if t.AtLeast {
			bound = ">="
		}
		fmt.Fprintf(w, "  %-42s %7.2f %s (target %s %g): %s%s; %s\n", t.Name, t.Value, t.Unit, bound, t.Limit, verdict, fr, t.Note)
	}
}

// coldStartLines reports the cold containerDisk starts against crane's pull and the warm start.
func coldStartLines(w io.Writer, m measured) {
	cs := m.coldStart
	if cs == nil || len(m.runs) == 0 {
		return
	}
	warm := m.runs[0].CreateToRunning.P50
	pull := cs.CreateToRunning.P50 - warm
	fmt.Fprintf(w, "\nCold containerDisk start (%d runs, one VMI each, an image no node had; layer %.1f MiB compressed), p50:\n", cs.Runs, float64(cs.LayerBytes)/(1<<20))
	fmt.Fprintf(w, "  creation -> Running %.2f s (p95 %.2f); warm (%d VMI run) %.2f s: the pull through the kubelet adds %.2f s\n",
		cs.CreateToRunning.P50, cs.CreateToRunning.P95, m.runs[0].VMIs, warm, pull)
	unpacked := cs.CranePull.P50 + cs.CraneUnpack.P50
	fmt.Fprintf(w, "  crane pull of the same image into an empty OCI layout %.2f s (p95 %.2f), then unpacking it %.2f s (p95 %.2f): pull + unpack %.2f s\n",
		cs.CranePull.P50, cs.CranePull.P95, cs.CraneUnpack.P50, cs.CraneUnpack.P95, unpacked)
	fmt.Fprintf(w, "  the kubelet's pull (cold - warm) is %.1fx crane's pull + unpack (%.1fx its pull alone); cold start / crane pull + unpack %.1fx\n",
		ratio(pull, unpacked), ratio(pull, cs.CranePull.P50), ratio(cs.CreateToRunning.P50, unpacked))
}
