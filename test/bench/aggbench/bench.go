package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// Namespaces: seedNS holds the objects get, list and update act on; probeNS the webhook probes.
const (
	seedNS  = "bench-seed"
	probeNS = "bench-probe"
)

var concurrencies = []int{1, 8, 32}

var ops = []string{"create", "get", "list", "update", "watch"}

// bench starts the installation, the webhook server, the CRD and the webhooks, measures both
// targets and writes the report. Whatever it started is stopped and deleted before it returns.
func bench(ctx context.Context, c config) (err error) {
	if c, err = absolute(c); err != nil {
		return err
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "vireo-apiserver", "vireo-controller"} {
		if _, err := os.Stat(c.bin + "/" + bin); err != nil {
			return fmt.Errorf("%s not built: run `make build upstream`", bin)
		}
	}
	cluster := localcluster.New(clusterOptions(c))
	_ = cluster.Down(true) // the leftovers of an interrupted run
	defer func() {
		if derr := cluster.Down(true); derr != nil {
			err = errors.Join(err, fmt.Errorf("removing the benchmark's installation: %w", derr))
		}
	}()
	if err := cluster.Up(ctx); err != nil {
		return err
	}
	cl, err := newClients(cluster)
	if err != nil {
		return err
	}
	if err := stopController(ctx, cl.kube); err != nil {
		return err
	}
	wh, caBundle, err := crdbaseline.StartWebhook(cluster)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, wh.Close()) }()

	say("installing the VirtualMachineInstance CRD (%s) and its webhooks (%s)", crdbaseline.Group, wh.URL())
	if err := crdbaseline.InstallCRD(ctx, cl.dyn, c.statusSubresource); err != nil {
		return err
	}
	namespaces := []string{seedNS, probeNS}
	for _, n := range concurrencies {
		namespaces = append(namespaces, fmt.Sprintf("bench-create-%d", n), fmt.Sprintf("bench-watch-%d", n))
	}
	if err := createNamespaces(ctx, cl, namespaces); err != nil {
		return err
	}
	if err := crdbaseline.InstallWebhooks(ctx, cl.kube, cl.dyn, wh.URL(), caBundle, probeNS); err != nil {
		return err
	}
	user := cl
	if c.rbacUser {
		if user, err = rbacUserClients(ctx, cluster, cl); err != nil {
			return err
		}
	}
	vireo := newTarget("vireo", user.dyn, vireoVMIs)
	crd := newTarget("crd", user.dyn, crdbaseline.VMIs)
	if err := seed(ctx, c, vireo, crd); err != nil {
		return err
	}
	sizes, err := compareStored(ctx, vireo, crd, seedNS, c.statusSubresource)
	if err != nil {
		return err
	}
	say("both targets store the same defaulted object (%d bytes from Vireo, %d from the CRD)", sizes.Vireo, sizes.CRD)
	sarBefore, err := subjectAccessReviews(ctx, cl)
	if err != nil {
		return err
	}
	mutBefore, valBefore := wh.Calls()
	results, err := measureAll(ctx, c, vireo, crd)
	if err != nil {
		return err
	}
	sarAfter, err := subjectAccessReviews(ctx, cl)
	if err != nil {
		return err
	}
	mutAfter, valAfter := wh.Calls()
	return report(c, results, callCounts{
		Mutating: mutAfter - mutBefore, Validating: valAfter - valBefore, SubjectAccessReviews: sarAfter - sarBefore,
	}, sizes)
}

// seed creates the objects get, list and update act on; it is also both targets' warm-up.
func seed(ctx context.Context, c config, vireo, crd *target) error {
	for _, t := range []*target{vireo, crd} {
		say("%s: creating %d objects in %s (also the warm-up)", t.name, c.objects, seedNS)
		if err := measure.Seed(ctx, t, seedNS, 32, c.objects); err != nil {
			return fmt.Errorf("%s: seeding: %w", t.name, err)
		}
		if _, err := measure.Lists(ctx, t, seedNS, 1, 2, c.objects); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return nil
}

// measureAll measures every operation at every concurrency on both targets, taking turns at
// going first so neither systematically runs on a warmer or busier machine.
func measureAll(ctx context.Context, c config, vireo, crd *target) ([]measure.Comparison, error) {
	var results []measure.Comparison
	turn := 0
	for _, clients := range concurrencies {
		for _, op := range ops {
			pair := []*target{vireo, crd}
			if turn%2 == 1 {
				pair = []*target{crd, vireo}
			}
			turn++
			stats := map[*target]measure.Stats{}
			for _, t := range pair {
				s, err := measureOne(ctx, c, t, op, clients)
				if err != nil {
					return nil, fmt.Errorf("%s: %s with %d clients: %w", t.name, op, clients, err)
				}
				stats[t] = s
			}
			results = append(results, measure.Compare(op, clients, stats[vireo], stats[crd]))
			say("measured %s with %d clients: vireo %.0f ops/s p50 %.2f ms, crd %.0f ops/s p50 %.2f ms",
				op, clients, stats[vireo].Throughput, stats[vireo].P50ms, stats[crd].Throughput, stats[crd].P50ms)
		}
	}
	return results, nil
}

// measureOne measures one operation on one target.
func measureOne(ctx context.Context, c config, t *target, op string, clients int) (measure.Stats, error) {
	switch op {
	case "create":
		return measure.Creates(ctx, t, fmt.Sprintf("bench-create-%d", clients), clients, c.ops)
	case "get":
		return measure.Gets(ctx, t, seedNS, clients, c.ops, c.objects)
	case "list":
		return measure.Lists(ctx, t, seedNS, clients, max(c.ops/10, clients), c.objects)
	case "update":
		return measure.Updates(ctx, t, seedNS, clients, c.ops, c.objects)
	case "watch":
		return measure.WatchDelivery(ctx, t, fmt.Sprintf("bench-watch-%d", clients), clients, c.ops, 60*time.Second)
	}
	return measure.Stats{}, fmt.Errorf("unknown operation %q", op)
}

func say(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
