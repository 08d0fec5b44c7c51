package main

import (
	"context"
	"fmt"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// run measures count operations of kind op on t, spread over clients goroutines. Reads act on
// objects objects, created first in ns, unmeasured.
func run(ctx context.Context, t measure.Target, op, ns string, clients, count, objects int) (measure.Stats, error) {
	switch op {
	case "create":
		return measure.Creates(ctx, t, ns, clients, count)
	case "get", "list":
		if err := measure.Seed(ctx, t, ns, clients, objects); err != nil {
			return measure.Stats{}, err
		}
		if op == "get" {
			return measure.Gets(ctx, t, ns, clients, count, objects)
		}
		return measure.Lists(ctx, t, ns, clients, count, objects)
	case "watch":
		return measure.WatchDelivery(ctx, t, ns, clients, count, 60*time.Second)
	}
	return measure.Stats{}, fmt.Errorf("unknown operation %q", op)
}
