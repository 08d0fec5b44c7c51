// Command scalebench measures Vireo's control plane at scale on one machine (`make scale`): a
// real kube-apiserver, vireo-apiserver with its etcd and vireo-controller on one local node,
// against simulated nodes (test/scale/simkubelet) and simulated node agents
// (test/scale/simagent). It creates VMIs in waves (1,000, 10,000, 100,000, up to -vmis) and
// measures at each size: memory (RSS) of the servers and their etcd databases, create
// throughput, creation -> Running through the whole control path, list latencies, the watch
// fan-out to every node's watch, the controller's queue latency and CPU, and the API writes per
// VMI; then the same waves against KubeVirt's design, the kind as a CRD with admission
// webhooks (test/bench/crdbaseline), in the same installation. It writes scale.txt and
// scale.json (and PNG plots) to -out, and exits non-zero when the control path did not bring
// every VMI to Running or a measurement failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"
)

// config is what the flags set.
type config struct {
	out, root, bin, manifests string
	vmis, nodes               int
	// rate is the VMIs created per second (0: as fast as the creators go); creators is how
	// many create at once.
	rate     float64
	creators int
	// probes is how many watch fan-out probes each size sends.
	probes int
	// namespaces spread the VMIs; one namespace's list holds 1/namespaces of them.
	namespaces int
	crd        bool
	// fullPath is the largest wave that goes through the whole control path; larger waves
	// write their VMIs' Running status directly (directWave).
	fullPath int
	timeout  time.Duration
	// controllerWorkers, when set, restarts vireo-controller with that many workers per loop.
	controllerWorkers int
	// smoke installs in a network namespace, subnet and ports of its own (make test's run).
	smoke bool
}

func defaultConfig() config {
	return config{out: "_output/bench", root: "_output/scale-cluster", bin: "_output/bin", manifests: "artifacts",
		vmis: 100000, nodes: 1000, rate: 100, creators: 16, probes: 300, namespaces: 10, crd: true, fullPath: 10000, timeout: 6 * time.Hour}
}

func main() {
	c := defaultConfig()
	flag.StringVar(&c.out, "out", c.out, "Directory for scale.txt, scale.json and the plots.")
	flag.StringVar(&c.root, "root", c.root, "Root directory of the harness's own installation (deleted afterwards).")
	flag.StringVar(&c.bin, "bin", c.bin, "Directory of the binaries (make build upstream).")
	flag.StringVar(&c.manifests, "manifests", c.manifests, "The repository's artifacts directory.")
	flag.IntVar(&c.vmis, "vmis", c.vmis, "VMIs at the end of the last wave (waves: 1,000, 10,000, 100,000, ... up to this).")
	flag.IntVar(&c.nodes, "nodes", c.nodes, "Simulated nodes (each with its node agent's watch).")
	flag.Float64Var(&c.rate, "rate", c.rate, "VMIs created per second (0: as fast as the creators go).")
	flag.IntVar(&c.creators, "creators", c.creators, "Concurrent creating clients.")
	flag.IntVar(&c.probes, "probes", c.probes, "Watch fan-out probes per size.")
	flag.IntVar(&c.namespaces, "namespaces", c.namespaces, "Namespaces the VMIs are spread over.")
	flag.BoolVar(&c.crd, "crd", c.crd, "Measure the CRD + webhook baseline too.")
	flag.IntVar(&c.fullPath, "full-path", c.fullPath, "Waves up to this many VMIs go through the whole control path (controller, launcher Pods, scheduler, simulated kubelets and agents); larger ones are written directly, with vireo-controller stopped, to measure the API at size (creation -> Running is not measured there).")
	flag.DurationVar(&c.timeout, "timeout", c.timeout, "Give up after this long.")
	flag.IntVar(&c.controllerWorkers, "controller-workers", 0, "Restart vireo-controller with this many workers per reconcile loop (0: as installed).")
	flag.Parse()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

// validate refuses flags the harness cannot run with, naming the flag.
func (c config) validate() error {
	switch {
	case c.vmis < 1:
		return fmt.Errorf("-vmis must be at least 1, not %d", c.vmis)
	case c.nodes < 1 || c.nodes > maxNodes:
		return fmt.Errorf("-nodes must be between 1 and %d (the Pod network's /24s), not %d", maxNodes, c.nodes)
	case c.rate < 0:
		return fmt.Errorf("-rate must not be negative, not %g", c.rate)
	case c.creators < 1:
		return fmt.Errorf("-creators must be at least 1, not %d", c.creators)
	case c.namespaces < 1:
		return fmt.Errorf("-namespaces must be at least 1, not %d", c.namespaces)
	case c.probes < 0:
		return fmt.Errorf("-probes must not be negative, not %d", c.probes)
	case c.fullPath < waves(c.vmis)[0]:
		return fmt.Errorf("-full-path must be at least the first wave's %d VMIs (the direct waves copy the status VMI 0 got running through the control path), not %d",
			waves(c.vmis)[0], c.fullPath)
	case c.controllerWorkers < 0:
		return fmt.Errorf("-controller-workers must not be negative, not %d", c.controllerWorkers)
	}
	return nil
}

// waves are the sizes measured: the powers of ten from 1,000 below vmis, then vmis.
func waves(vmis int) []int {
	var out []int
	for w := 1000; w < vmis; w *= 10 {
		out = append(out, w)
	}
	return slices.Compact(append(out, vmis))
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
