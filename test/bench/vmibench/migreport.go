package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// migrationTargets are the issue's, for each scenario of migrations between nodes: total at
// most 10 s, downtime at most 300 ms, Vireo's total at most 1.5x the direct one.
func migrationTargets(r migrationResult) []target {
	var ts []target
	for _, scenario := range []string{scenarioIdle, scenarioDirty} {
		v, d := r.Figures[scenario][routeBetweenNodes], r.Figures[scenario][routeDirect]
		x := ratio(v.Total.P50, d.Total.P50)
		ts = append(ts,
			target{Name: scenario + ": total p50, between nodes", Value: v.Total.P50, Limit: 10, Unit: "s", Met: v.Total.P50 <= 10,
				Note: fmt.Sprintf("max %.2f s", v.Total.Max)},
			target{Name: scenario + ": downtime p50, between nodes", Value: 1000 * v.Downtime.P50, Limit: 300, Unit: "ms", Met: v.Downtime.P50 <= 0.3,
				Note: fmt.Sprintf("max %.0f ms; direct p50 %.0f ms", 1000*v.Downtime.Max, 1000*d.Downtime.P50)},
			target{Name: scenario + ": total p50, Vireo / direct", Value: x, Limit: 1.5, Unit: "x", Met: x > 0 && x <= 1.5,
				Note: fmt.Sprintf("%.2f s between nodes, %.2f s direct", v.Total.P50, d.Total.P50)})
	}
	return ts
}

// migrationReport writes migration.txt and migration.json.
func migrationReport(c config, r migrationResult, elapsed time.Duration) error {
	ts := migrationTargets(r)
	doc := phaseDoc("Live migration of a "+r.GuestMemory+" vmi-tiny guest on vireo-local (TCG), idle and dirtying its memory: "+
		"through Vireo between nodes and in place, against the same migration directly between two fresh session libvirtds in the same run", r, ts, elapsed)
	return measure.WriteResults(c.out, "migration", doc, func(w io.Writer) {
		fmt.Fprintf(w, "Live migration of a %s vmi-tiny guest, %d migrations per route and scenario, %d CPUs, TCG.\n", r.GuestMemory, r.Runs, runtime.NumCPU())
		fmt.Fprintf(w, "Dirtying: the guest rewrites a %d MiB file in its tmpfs over and over (dd).\n\n", r.DirtyMiB)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\ttotal p50 (s)\tmax\ttransfer p50 (s)\tmax\tdowntime p50 (ms)\tmax\tdata p50 (MiB)\ttotal vs direct\t")
		for _, scenario := range []string{scenarioIdle, scenarioDirty} {
			direct := r.Figures[scenario][routeDirect]
			for _, route := range []string{routeBetweenNodes, routeInPlace, routeDirect} {
				f := r.Figures[scenario][route]
				fmt.Fprintf(tw, "%s, %s (n=%d)\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%.2fx\t\n", scenario, route, f.Total.N,
					f.Total.P50, f.Total.Max, f.Transfer.P50, f.Transfer.Max, 1000*f.Downtime.P50, 1000*f.Downtime.Max, f.DataMiB.P50,
					ratio(f.Total.P50, direct.Total.P50))
			}
		}
		_ = tw.Flush()
		phaseLine(w, r)
		cpuLines(w, r)
		targetLines(w, ts)
		fmt.Fprintf(w, "\nTotal: through Vireo, the VirtualMachineInstanceMigration's creation -> phase Succeeded as a watch sees it (target Pod,\n")
		fmt.Fprintf(w, "launcher, libvirtd, target preparation, the transfer through the node agents' proxies, mutual TLS between nodes);\n")
		fmt.Fprintf(w, "direct, a fresh target libvirtd's start (QEMU's capabilities seeded from a node's cache, as launchers' are) -> its\n")
		fmt.Fprintf(w, "disks prepared -> the migration call returned, over unix sockets straight between the daemons. Transfer, downtime and\n")
		fmt.Fprintf(w, "data are libvirt's completed job statistics on the target (Vireo's from the target node agent's vireo_vmi_migration_*).\n")
		fmt.Fprintf(w, "Both use the launcher's libvirt call: live, peer-to-peer, the containerDisk overlay copied over NBD. The routes take\n")
		fmt.Fprintf(w, "turns, run by run (Vireo first, then direct; the other way round every other run), the other route's guest paused,\n")
		fmt.Fprintf(w, "so that drift in the machine's speed lands on both. Migration phase: %.0f s.\n", elapsed.Seconds())
	})
}

// phaseLine shows where Vireo's total goes: creation -> each phase, p50 over every Vireo
// migration of the run.
func phaseLine(w io.Writer, r migrationResult) {
	fmt.Fprintln(w, "\nVireo's migrations, creation -> each phase as a watch saw it (p50, s):")
	for _, scenario := range []string{scenarioIdle, scenarioDirty} {
		for _, route := range []string{routeBetweenNodes, routeInPlace} {
			f := r.Figures[scenario][route]
			fmt.Fprintf(w, "  %s, %s:", scenario, route)
			for _, p := range []v1.VirtualMachineInstanceMigrationPhase{v1.MigrationScheduling, v1.MigrationScheduled, v1.MigrationPreparingTarget,
				v1.MigrationTargetReady, v1.MigrationRunning, v1.MigrationSucceeded} {
				if d, ok := f.Phases[p]; ok {
					fmt.Fprintf(w, " %s %.2f", p, d.P50)
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// cpuLines shows where the machine's CPU went during one migration, by route: the mean over
// the run's migrations of the roles that spent the most.
func cpuLines(w io.Writer, r migrationResult) {
	fmt.Fprintln(w, "\nCPU during one migration (mean; CPU-s, machine busy of its window, then the busiest processes):")
	for _, scenario := range []string{scenarioIdle, scenarioDirty} {
		for _, route := range []string{routeBetweenNodes, routeInPlace, routeDirect} {
			c := r.Figures[scenario][route].CPU
			fmt.Fprintf(w, "  %s, %s: busy %.2f of %.2f; %s\n", scenario, route, c.HostBusy, c.Window*float64(runtime.NumCPU()), topRoles(c, 7))
		}
	}
}
