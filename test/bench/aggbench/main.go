// Command aggbench measures VirtualMachineInstances served the two ways a KubeVirt-compatible
// API can be built, side by side on one kube-apiserver: (a) Vireo's, kubevirt.io/v1 from an
// aggregated API server with defaulting and validation in process, and (b) KubeVirt's, the same
// schema as a CRD in kube-apiserver's etcd with a mutating and a validating admission webhook
// doing the same defaulting and validation. It starts its own vireo-local installation and
// removes it again, even on failure or interrupt.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// config is what the flags set.
type config struct {
	out, root, bin, manifests   string
	ops, objects                int
	statusSubresource, rbacUser bool
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "_output/bench", "Directory for the table (aggregation.txt) and JSON (aggregation.json).")
	flag.StringVar(&c.root, "root", "_output/bench-cluster", "Root directory of the benchmark's own installation (deleted afterwards).")
	flag.StringVar(&c.bin, "bin", "_output/bin", "Directory of the binaries (make build upstream).")
	flag.StringVar(&c.manifests, "manifests", "artifacts", "The repository's artifacts directory (RBAC).")
	flag.IntVar(&c.ops, "n", 300, "Operations per measurement (create, get, update, watch); lists use n/10.")
	flag.IntVar(&c.objects, "objects", 1000, "Objects in the namespace that get, list and update act on.")
	flag.BoolVar(&c.statusSubresource, "crd-status-subresource", false,
		"Give the CRD a /status subresource. KubeVirt's VMI CRD has none; with one, kube-apiserver drops the status the mutating webhook sets on create.")
	flag.BoolVar(&c.rbacUser, "rbac-user", false,
		"Measure as an ordinary user allowed by RBAC instead of the admin (system:masters), so vireo-apiserver's delegated authorization and API Priority and Fairness take part.")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := bench(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "aggbench:", err)
		os.Exit(1)
	}
}
