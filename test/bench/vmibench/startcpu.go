package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// cpuSnapshot is every process's CPU time at one moment, with the host's busy and total ticks.
type cpuSnapshot struct {
	at          time.Time
	procs       map[int]procCPU
	busy, total int64
}

type procCPU struct {
	role  string
	ticks int64
}

// startCPU is where the machine's CPU went from the VMIs' creation until all of them ran.
type startCPU struct {
	Window float64 `json:"windowSeconds"`
	// HostBusy is the CPU time of the whole machine, in seconds of one core.
	HostBusy float64 `json:"hostBusyCPUSeconds"`
	// ByRole are CPU seconds per kind of process (processes that exited within the window
	// are missing; their parents' reaped time is not counted either).
	ByRole map[string]float64 `json:"cpuSecondsByRole"`
}

// takeCPUSnapshot reads every process's CPU time.
func takeCPUSnapshot() (cpuSnapshot, error) {
	s := cpuSnapshot{at: time.Now(), procs: map[int]procCPU{}}
	procs, err := hostproc.List()
	if err != nil {
		return s, err
	}
	for _, p := range procs {
		if t, err := hostproc.CPUTicks(p.Pid); err == nil {
			s.procs[p.Pid] = procCPU{role: cpuRole(p), ticks: t}
		}
	}
	s.busy, s.total, err = hostproc.HostCPU()
	return s, err
}

// cpuRole names a process by what it is: its executable, with vireo-local's subcommand.
func cpuRole(p hostproc.Proc) string {
	name := p.Name()
	switch {
	case strings.HasPrefix(name, "qemu-system"):
		return "QEMU"
	case name == "vireo-local" && len(p.Args) > 1:
		return name + " " + p.Args[1]
	}
	return name
}

// cpuBetween is the CPU each role spent from a to b; a process started meanwhile counts whole.
func cpuBetween(a, b cpuSnapshot) startCPU {
	res := startCPU{Window: b.at.Sub(a.at).Seconds(), ByRole: map[string]float64{}}
	if b.total > a.total {
		res.HostBusy = float64(b.busy-a.busy) / float64(b.total-a.total) * res.Window * float64(runtime.NumCPU())
	}
	for pid, pb := range b.procs {
		spent := pb.ticks
		if pa, ok := a.procs[pid]; ok && pa.role == pb.role {
			spent -= pa.ticks
		}
		if spent > 0 {
			res.ByRole[pb.role] += float64(spent) / hostproc.ClockTicks
		}
	}
	return res
}

// cpuSince is the CPU each role spent since snapshot a.
func cpuSince(a cpuSnapshot) (startCPU, error) {
	b, err := takeCPUSnapshot()
	return cpuBetween(a, b), err
}

// topRoles lists the n roles of c that spent the most CPU, "role seconds" each.
func topRoles(c startCPU, n int) string {
	type roleCPU struct {
		role string
		sec  float64
	}
	var roles []roleCPU
	for role, s := range c.ByRole {
		roles = append(roles, roleCPU{role, s})
	}
	slices.SortFunc(roles, func(x, y roleCPU) int { return cmp.Compare(y.sec, x.sec) })
	var parts []string
	for _, rc := range roles[:min(n, len(roles))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", rc.role, rc.sec))
	}
	return strings.Join(parts, ", ")
}

// startCPUTable lists the roles that spent the most CPU until all VMIs ran, per run size.
func startCPUTable(w io.Writer, runs []lifecycleResult) {
	for _, r := range runs {
		if r.StartCPU == nil {
			continue
		}
		fmt.Fprintf(w, "CPU from creation until all %d ran (%.1f s, machine busy %.1f CPU-s of %.1f): %s\n", r.VMIs, r.StartCPU.Window,
			r.StartCPU.HostBusy, r.StartCPU.Window*float64(runtime.NumCPU()), topRoles(*r.StartCPU, 8))
	}
}
