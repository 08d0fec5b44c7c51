// Command vmibench measures a VirtualMachineInstance's whole life on vireo-local against the
// floor of what its launcher's own work costs: it starts its own installation with two local
// nodes, creates 1 and then 10 VMIs at once from vmi-tiny's spec and measures creation -> Running
// and -> the guest's boot marker on its serial console (with the milestones in between), the
// VMI writes each phase of the lifecycle costs (vireo-apiserver's apiserver_request_total),
// the resident memory of each VMI's launcher, libvirtd and QEMU beyond the guest's RAM, and
// their idle CPU, and the first start of a containerDisk no node has pulled yet against crane's
// pull of the same image. The floor, measured in the same run, starts the same domains from fresh
// session libvirtds with no Kubernetes around them. Then 10 VirtualMachines are started and
// stopped at once through their subresources and one is paused and unpaused 20 times through
// kube-apiserver's aggregation, against the same on bare libvirt. Then the web console's page is
// loaded in headless Chromium from vireoctl ui's server, against the same assets from a plain
// file server, and timed until it lists a namespace's VMs. Then one VMI's serial console
// and VNC are timed (first byte, echo round trip, throughput) through kube-apiserver's
// aggregation and straight to its node agent, alternately; then port-forward to a guest's echo
// server and web server through kube-apiserver against a TCP connection straight to its Pod,
// and the guest agent's round trip. Then a 256 MiB guest live-migrates,
// idle and then dirtying its memory, through Vireo (between the nodes and in place), taking
// turns with a second one migrating directly between two fresh libvirtds (total time,
// libvirt's transfer time and downtime, data sent, CPU by process). Last, the density run: 100
// tiny VMIs created 100 ms apart (as many as the nodes can schedule) against as many domains
// started so on fresh libvirtds. It writes tables and JSON (vmi-lifecycle.txt/.json,
// webconsole.txt/.json, console.txt/.json, portforward.txt/.json, migration.txt/.json, density.txt/.json) and removes
// everything it started, even on failure or interrupt.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vireo-dev/vireo/launcher/virt"
)

// config is what the flags set.
type config struct {
	out, root, bin, manifests, images string
	sizes                             []int
	vms                               int
	idle, startTimeout                time.Duration
	warmup, lifecycle, streams        bool
	portForward, migration            bool
	migrationRuns, dirtyMiB           int
	coldStarts                        int
	tcgCacheMiB, altTCGCacheMiB       uint
	density                           int
	densityInterval, densityTimeout   time.Duration
	densityCPU                        string
	uiRuns, uiVMs                     int
	web, chromium                     string
}

func main() {
	c := config{sizes: []int{1, 10}}
	flag.StringVar(&c.out, "out", "_output/bench", "Directory for the table (vmi-lifecycle.txt) and JSON (vmi-lifecycle.json).")
	flag.StringVar(&c.root, "root", "_output/bench-vmi-cluster", "Root directory of the benchmark's own installation (deleted afterwards).")
	flag.StringVar(&c.bin, "bin", "_output/bin", "Directory of the binaries (make build upstream).")
	flag.StringVar(&c.manifests, "manifests", "artifacts", "The repository's artifacts directory (Vireo's manifests and examples/vmi-tiny.yaml).")
	flag.StringVar(&c.images, "images", "_output/images", "Directory of the test guest images (make images).")
	flag.DurationVar(&c.idle, "idle", 10*time.Second, "Window over which idle CPU is measured with the largest run's guests booted.")
	flag.DurationVar(&c.startTimeout, "start-timeout", 3*time.Minute, "How long a run may take until every VMI runs and its guest printed the marker.")
	flag.Func("sizes", "Run sizes, comma-separated: VMIs created at once per run (default 1,10).", func(v string) error {
		c.sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive number of VMIs", f)
			}
			c.sizes = append(c.sizes, n)
		}
		return nil
	})
	flag.IntVar(&c.vms, "vms", 10, "VMs of the VM phase: started and stopped at once through their subresources, one paused and unpaused (0: skip).")
	flag.IntVar(&c.coldStarts, "cold-starts", 3, "Cold containerDisk starts of the lifecycle phase: each pushes an image no node has, times crane's pull of it, then one VMI's creation -> Running with it (0: skip).")
	flag.BoolVar(&c.lifecycle, "lifecycle", true, "Measure the VMI lifecycle runs (-sizes) and the VM phase (-vms); vmi-lifecycle.txt.")
	flag.BoolVar(&c.streams, "streams", true, "Measure the serial console and VNC of one VMI through kube-apiserver's aggregation and straight to the node agent; console.txt.")
	flag.BoolVar(&c.portForward, "portforward", true, "Measure port-forward to one VMI through kube-apiserver against a TCP connection straight to its Pod, and the guest agent's round trip; portforward.txt.")
	flag.BoolVar(&c.migration, "migration", true, "Measure live migrations of a 256 MiB guest, idle and dirtying its memory, through Vireo (between nodes and in place) and directly between two libvirtds; migration.txt.")
	flag.IntVar(&c.migrationRuns, "migration-runs", 9, "Migrations per route and scenario of the migration phase (the routes take turns, run by run).")
	flag.IntVar(&c.dirtyMiB, "dirty-mib", 64, "Working set the dirtying guest rewrites over and over, in MiB.")
	flag.BoolVar(&c.warmup, "warmup", true, "First run one unmeasured VMI on each node (pulls the containerDisk, warms caches).")
	flag.UintVar(&c.tcgCacheMiB, "tcg-cache-mib", 32, "TCG translation cache the floor's domains get: the launcher's --tcg-cache-mib (default 32); the QEMU command lines are compared to catch a mismatch.")
	flag.UintVar(&c.altTCGCacheMiB, "alt-tcg-cache-mib", 8, "Also measure the smallest run's floor with this TCG cache size, for its memory and boot time (0: skip).")
	flag.IntVar(&c.density, "density", 100, "VMIs of the density run, created -density-interval apart, against as many domains started so on bare libvirtds (0: skip); fewer when the nodes cannot schedule them or the machine runs short of memory, and density.txt says which; density.txt.")
	flag.DurationVar(&c.densityInterval, "density-interval", 100*time.Millisecond, "Interval between the density run's creates (KubeVirt's density gate: 100ms).")
	flag.StringVar(&c.densityCPU, "density-cpu", "10m", "CPU request of each density VMI (the default 100m of a 1-vCPU VMI fits only ~20 launcher Pods on this machine's 2 CPUs).")
	flag.DurationVar(&c.densityTimeout, "density-timeout", 20*time.Minute, "How long the density run, and then its floor, may take until every guest printed its marker.")
	flag.IntVar(&c.uiRuns, "ui-runs", 20, "Loads of the web console, and of the same assets from a plain file server, in headless Chromium (0: skip); webconsole.txt.")
	flag.IntVar(&c.uiVMs, "ui-vms", 20, "Stopped VMs the web console phase's namespace holds, which the page lists.")
	flag.StringVar(&c.web, "web", "web", "The repository's web directory (web/test/bench.mjs, and node_modules from make ui).")
	flag.StringVar(&c.chromium, "chromium", "/usr/bin/chromium", "The browser of the web console phase (Debian's chromium: make deps).")
	flag.Parse()
	if _, err := resource.ParseQuantity(c.densityCPU); err != nil {
		fmt.Fprintf(os.Stderr, "vmibench: -density-cpu %q: %v\n", c.densityCPU, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 40*time.Minute+2*c.densityTimeout)
	defer cancel()
	// The floor's QEMUs (daemonized by its libvirtds) come to the benchmark when orphaned and
	// are reaped at once, as a launcher reaps its own: this machine's init reaps about once a
	// second, and libvirtd waits for a stopped QEMU to be reaped. Other orphans of the
	// installation's processes stay zombies until the benchmark exits.
	if err := virt.ReapOrphans(ctx, virt.IsQEMU); err != nil {
		fmt.Fprintln(os.Stderr, "vmibench: cannot reap the floor's QEMUs:", err)
		os.Exit(1)
	}
	if err := bench(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "vmibench:", err)
		os.Exit(1)
	}
}
