// Command apibench measures vireo-apiserver's create, get, list and watch throughput
// and latency at several client concurrencies, next to the same operations sent straight
// to an embedded etcd in the same process (the storage floor every API server pays).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

func main() {
	out := flag.String("out", "_output/bench", "Directory for the table and JSON results.")
	n := flag.Int("n", 300, "Operations per measurement (create, get, watch); lists use n/10.")
	flag.Parse()
	if err := bench(*out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		os.Exit(1)
	}
}

func bench(outDir string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "vireo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	api, err := newAPITarget(ctx, dir+"/api")
	if err != nil {
		return err
	}
	defer api.Close()
	raw, err := newEtcdTarget(ctx, dir+"/etcd")
	if err != nil {
		return err
	}
	defer raw.Close()

	var results []measure.Comparison
	for _, clients := range []int{1, 8, 32} {
		for _, op := range []string{"create", "get", "list", "watch"} {
			count := n
			if op == "list" {
				count = max(n/10, clients)
			}
			ns := fmt.Sprintf("bench-%s-%d", op, clients)
			vireo, err := run(ctx, api, op, ns, clients, count, n)
			if err != nil {
				return fmt.Errorf("vireo %s x%d: %w", op, clients, err)
			}
			etcd, err := run(ctx, raw, op, ns, clients, count, n)
			if err != nil {
				return fmt.Errorf("etcd %s x%d: %w", op, clients, err)
			}
			results = append(results, measure.Compare(op, clients, vireo, etcd))
			fmt.Fprintf(os.Stderr, "measured %s with %d clients\n", op, clients)
		}
	}
	return report(outDir, n, results)
}
