package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// vmiProcs are the processes that run one VMI: its launcher, everything below it (libvirtd),
// its QEMU (which daemonizes away from libvirtd), and what the container runtime runs for its
// Pod: the containerd shim above the launcher and the Pod's pause container.
type vmiProcs struct {
	vmi      string
	launcher int
	libvirtd []int
	qemu     int
	shim     int
	pause    []int
	other    []int
	qemuArgs []string
}

// findVMIProcs finds the processes of vmi in procs.
func findVMIProcs(procs []hostproc.Proc, vmi *v1.VirtualMachineInstance) (vmiProcs, error) {
	out := vmiProcs{vmi: vmi.Name}
	for _, p := range procs {
		if p.HasArgPair("--uid", string(vmi.UID)) && p.HasArgPair("--namespace", vmi.Namespace) {
			out.launcher = p.Pid
		}
		if strings.Contains(p.Name(), "qemu-system") && strings.Contains(p.Joined()+",", "guest="+domain.DomainName(vmi)+",") {
			out.qemu, out.qemuArgs = p.Pid, p.Args
		}
	}
	if out.launcher == 0 || out.qemu == 0 {
		return out, fmt.Errorf("VMI %s: launcher pid %d, QEMU pid %d: not both found in /proc", vmi.Name, out.launcher, out.qemu)
	}
	parent := launcherParent(procs, out.launcher)
	for _, p := range procs {
		if p.Pid == parent && strings.HasPrefix(p.Name(), "containerd-shim") {
			out.shim = p.Pid
		}
	}
	if out.shim == 0 {
		return out, fmt.Errorf("VMI %s: the launcher (pid %d) does not run below a containerd shim", vmi.Name, out.launcher)
	}
	for _, p := range procs {
		if p.PPid == out.shim && p.Name() == "pause" {
			out.pause = append(out.pause, p.Pid)
		}
	}
	for _, p := range hostproc.Descendants(procs, out.launcher)[1:] {
		switch {
		case p.Pid == out.qemu:
		case p.Name() == "libvirtd":
			out.libvirtd = append(out.libvirtd, p.Pid)
		default:
			out.other = append(out.other, p.Pid)
		}
	}
	return out, nil
}

// launcherParent is the parent pid of the launcher pid.
func launcherParent(procs []hostproc.Proc, pid int) int {
	for _, p := range procs {
		if p.Pid == pid {
			return p.PPid
		}
	}
	return 0
}

// vmiMemory is the resident memory of one VMI's processes, in MiB.
type vmiMemory struct {
	VMI      string  `json:"vmi"`
	Launcher float64 `json:"launcherRSSMiB"`
	Libvirtd float64 `json:"libvirtdRSSMiB"`
	QEMU     float64 `json:"qemuRSSMiB"`
	// Shim and Pause are the container runtime's share: the Pod's containerd shim and its
	// pause container.
	Shim     float64 `json:"shimRSSMiB"`
	Pause    float64 `json:"pauseRSSMiB"`
	Other    float64 `json:"otherRSSMiB"`
	Total    float64 `json:"totalRSSMiB"`
	TotalPSS float64 `json:"totalPSSMiB"`
	// Overhead is Total minus the guest's RAM (the definition).
	Overhead float64 `json:"overheadMiB"`
	// OverheadPSS is TotalPSS minus the guest's RAM: the pages VMs share counted once among them.
	OverheadPSS float64 `json:"overheadPSSMiB"`
	// OverheadResident is Total minus the guest RAM actually resident (QEMU's RAM mapping).
	OverheadResident float64     `json:"overheadExcludingResidentGuestRAMMiB"`
	Regions          qemuRegions `json:"qemuRegions"`
}

// measureMemory reads the resident memory of each VMI's processes.
func measureMemory(vmis []*v1.VirtualMachineInstance) ([]vmiMemory, []vmiProcs, error) {
	procs, err := hostproc.List()
	if err != nil {
		return nil, nil, err
	}
	var out []vmiMemory
	var groups []vmiProcs
	for _, vmi := range vmis {
		g, err := findVMIProcs(procs, vmi)
		if err != nil {
			return nil, nil, err
		}
		groups = append(groups, g)
		m := vmiMemory{VMI: vmi.Name}
		var pss int64
		add := func(pid int, into *float64) error {
			mem, err := hostproc.ReadMemory(pid)
			if err != nil {
				return fmt.Errorf("VMI %s: pid %d: %w", vmi.Name, pid, err)
			}
			*into += float64(mem.RSS) / hostproc.MiB
			pss += mem.PSS
			return nil
		}
		errs := []error{add(g.launcher, &m.Launcher), add(g.qemu, &m.QEMU), add(g.shim, &m.Shim)}
		for _, pid := range g.pause {
			errs = append(errs, add(pid, &m.Pause))
		}
		for _, pid := range g.libvirtd {
			errs = append(errs, add(pid, &m.Libvirtd))
		}
		for _, pid := range g.other {
			errs = append(errs, add(pid, &m.Other))
		}
		for _, e := range errs {
			if e != nil {
				return nil, nil, e
			}
		}
		if m.Regions, err = readQEMURegions(g.qemu, guestRAM(vmi)); err != nil {
			return nil, nil, err
		}
		m.Total = m.Launcher + m.Libvirtd + m.QEMU + m.Shim + m.Pause + m.Other
		m.TotalPSS = float64(pss) / hostproc.MiB
		m.Overhead = m.Total - float64(guestRAM(vmi))/hostproc.MiB
		m.OverheadPSS = m.TotalPSS - float64(guestRAM(vmi))/hostproc.MiB
		m.OverheadResident = m.Total - float64(m.Regions.GuestRAMResident)/hostproc.MiB
		out = append(out, m)
	}
	return out, groups, nil
}

// guestRAM is the guest memory of vmi in bytes (spec.domain.memory.guest, else the request).
func guestRAM(vmi *v1.VirtualMachineInstance) int64 {
	d := vmi.Spec.Domain
	if d.Memory != nil && d.Memory.Guest != nil {
		return d.Memory.Guest.Value()
	}
	q := d.Resources.Requests[v1.ResourceMemory]
	return q.Value()
}

// idleCPU is the CPU use over a window with every guest booted and idle, in percent of one core.
type idleCPU struct {
	Window float64 `json:"windowSeconds"`
	// PerVMI are per VMI, summed over its processes of each role.
	Launcher numbers `json:"launcherPercent"`
	Libvirtd numbers `json:"libvirtdPercent"`
	QEMU     numbers `json:"qemuPercent"`
	// Sums are over all VMIs.
	LauncherSum float64 `json:"launcherSumPercent"`
	LibvirtdSum float64 `json:"libvirtdSumPercent"`
	QEMUSum     float64 `json:"qemuSumPercent"`
	// NodeAgents is each node agent's use.
	NodeAgents map[string]float64 `json:"nodeAgentPercent"`
	// HostBusy is the whole machine's busy share of all its CPUs (100 = every core busy).
	HostBusy float64 `json:"hostBusyPercentOfAllCPUs"`
}

// measureIdleCPU samples the processes' CPU time over window.
func measureIdleCPU(ctx context.Context, groups []vmiProcs, agents map[string]int, window time.Duration) (idleCPU, error) {
	roles := map[string]map[int][]int{"launcher": {}, "libvirtd": {}, "qemu": {}}
	for i, g := range groups {
		roles["launcher"][i] = []int{g.launcher}
		roles["libvirtd"][i] = g.libvirtd
		roles["qemu"][i] = []int{g.qemu}
	}
	var pids []int
	for _, byVMI := range roles {
		for _, ps := range byVMI {
			pids = append(pids, ps...)
		}
	}
	for _, pid := range agents {
		pids = append(pids, pid)
	}
	before := map[int]int64{}
	for _, pid := range pids {
		t, err := hostproc.CPUTicks(pid)
		if err != nil {
			return idleCPU{}, err
		}
		before[pid] = t
	}
	busy0, total0, err := hostproc.HostCPU()
	if err != nil {
		return idleCPU{}, err
	}
	began := time.Now()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return idleCPU{}, ctx.Err()
	}
	elapsed := time.Since(began).Seconds()
	busy1, total1, err := hostproc.HostCPU()
	if err != nil {
		return idleCPU{}, err
	}
	share := func(pid int) float64 {
		t, err := hostproc.CPUTicks(pid)
		if err != nil {
			return 0 // exited meanwhile
		}
		return float64(t-before[pid]) / hostproc.ClockTicks / elapsed * 100
	}
	res := idleCPU{Window: elapsed, NodeAgents: map[string]float64{}, HostBusy: ratio(float64(busy1-busy0), float64(total1-total0)) * 100}
	perRole := map[string][]float64{}
	sums := map[string]*float64{"launcher": &res.LauncherSum, "libvirtd": &res.LibvirtdSum, "qemu": &res.QEMUSum}
	for role, byVMI := range roles {
		for i := range groups {
			var s float64
			for _, pid := range byVMI[i] {
				s += share(pid)
			}
			perRole[role] = append(perRole[role], s)
			*sums[role] += s
		}
	}
	res.Launcher, res.Libvirtd, res.QEMU = summarizeNumbers(perRole["launcher"]), summarizeNumbers(perRole["libvirtd"]), summarizeNumbers(perRole["qemu"])
	for node, pid := range agents {
		res.NodeAgents[node] = share(pid)
	}
	return res, nil
}

// nodeAgents finds the node agent process of each node.
func nodeAgents(nodes []string) (map[string]int, error) {
	procs, err := hostproc.List()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range procs {
		if p.Name() != "vireo-nodeagent" {
			continue
		}
		for _, n := range nodes {
			if strings.Contains(p.Joined()+" ", "--node-name="+n+" ") || p.HasArgPair("--node-name", n) {
				out[n] = p.Pid
			}
		}
	}
	if len(out) != len(nodes) {
		return out, fmt.Errorf("found node agents %v for nodes %v", out, nodes)
	}
	return out, nil
}

var (
	pathPattern = regexp.MustCompile(`/[^,"'\s=]+`)
	fdPattern   = regexp.MustCompile(`\bfd=\d+`)
)

// normalizeArgs replaces what differs between two launchers of the same VMI anyway: absolute
// paths and passed file descriptor numbers.
func normalizeArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = pathPattern.ReplaceAllString(a, "<path>")
		out[i] = fdPattern.ReplaceAllString(a, "fd=<n>")
	}
	return out
}

// compareArgs describes how two normalized command lines differ ("" when they do not).
func compareArgs(launcher, floor []string) string {
	var diffs []string
	for i := 0; i < max(len(launcher), len(floor)); i++ {
		var a, b string
		if i < len(launcher) {
			a = launcher[i]
		}
		if i < len(floor) {
			b = floor[i]
		}
		if a != b {
			diffs = append(diffs, fmt.Sprintf("arg %d: launcher %q, floor %q", i, a, b))
		}
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("... %d differences in all", len(diffs)))
	}
	return strings.Join(diffs, "; ")
}
