package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is one system under measurement.
type target interface {
	create(ctx context.Context, ns, name string) error
	get(ctx context.Context, ns, name string) error
	// list lists a namespace and returns how many objects came back.
	list(ctx context.Context, ns string) (int, error)
	// watch starts watching ns and calls seen(name, at) for every created object.
	watch(ctx context.Context, ns string, seen func(name string, at time.Time)) (stop func(), err error)
	close()
}

// stats are the figures of one measurement.
type stats struct {
	Ops        int     `json:"ops"`
	Throughput float64 `json:"opsPerSecond"`
	P50ms      float64 `json:"p50Milliseconds"`
	P99ms      float64 `json:"p99Milliseconds"`
}

// measure runs count operations of kind op spread over clients goroutines.
func measure(ctx context.Context, t target, op, ns string, clients, count, objects int) (stats, error) {
	switch op {
	case "get", "list":
		// Reads need objects to read: create them first, unmeasured.
		if err := parallel(clients, objects, func(i int) error { return t.create(ctx, ns, name(i)) }, nil); err != nil {
			return stats{}, err
		}
	}
	lat := make([]time.Duration, count)
	var run func(i int) error
	switch op {
	case "create":
		run = func(i int) error { return t.create(ctx, ns, name(i)) }
	case "get":
		run = func(i int) error { return t.get(ctx, ns, name(i%objects)) }
	case "list":
		run = func(int) error {
			got, err := t.list(ctx, ns)
			if err == nil && got != objects {
				err = fmt.Errorf("list returned %d objects, want %d", got, objects)
			}
			return err
		}
	case "watch":
		return measureWatch(ctx, t, ns, clients, count)
	}
	start := time.Now()
	if err := parallel(clients, count, run, lat); err != nil {
		return stats{}, err
	}
	return summarize(lat, time.Since(start)), nil
}

// measureWatch creates objects and measures the delay until a watcher sees each one.
func measureWatch(ctx context.Context, t target, ns string, clients, count int) (stats, error) {
	sent := make([]atomic.Int64, count)
	lat := make([]time.Duration, count)
	var got atomic.Int64
	done := make(chan struct{})
	stop, err := t.watch(ctx, ns, func(n string, at time.Time) {
		var i int
		if _, err := fmt.Sscanf(n, "obj-%d", &i); err != nil || i >= count {
			return
		}
		lat[i] = at.Sub(time.Unix(0, sent[i].Load()))
		if got.Add(1) == int64(count) {
			close(done)
		}
	})
	if err != nil {
		return stats{}, err
	}
	defer stop()
	start := time.Now()
	err = parallel(clients, count, func(i int) error {
		sent[i].Store(time.Now().UnixNano())
		return t.create(ctx, ns, name(i))
	}, nil)
	if err != nil {
		return stats{}, err
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		return stats{}, fmt.Errorf("watch delivered %d of %d events within 60s", got.Load(), count)
	}
	return summarize(lat, time.Since(start)), nil
}

// parallel runs fn(0..count-1) on clients goroutines, recording each latency in lat if non-nil.
func parallel(clients, count int, fn func(i int) error, lat []time.Duration) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				t0 := time.Now()
				if err := fn(i); err != nil {
					errs <- err
					return
				}
				if lat != nil {
					lat[i] = time.Since(t0)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func summarize(lat []time.Duration, wall time.Duration) stats {
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	pct := func(p float64) float64 {
		return float64(sorted[int(p*float64(len(sorted)-1))]) / float64(time.Millisecond)
	}
	return stats{Ops: len(lat), Throughput: float64(len(lat)) / wall.Seconds(), P50ms: pct(0.50), P99ms: pct(0.99)}
}

func name(i int) string { return fmt.Sprintf("obj-%d", i) }
