// Package measure runs API operations at a given client concurrency and summarizes their
// latency and throughput; the benchmarks under test/bench share it so every figure they print
// is measured the same way.
package measure

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Target is one system under measurement, reached by a client that creates, reads and watches
// objects by namespace and name.
type Target interface {
	Create(ctx context.Context, ns, name string) error
	Get(ctx context.Context, ns, name string) error
	// List lists a namespace and returns how many objects came back.
	List(ctx context.Context, ns string) (int, error)
	// Watch starts watching ns and calls seen(name, at) for every object added.
	Watch(ctx context.Context, ns string, seen func(name string, at time.Time)) (stop func(), err error)
}

// Updater is a Target that can also update an object it created (one write, no read first).
type Updater interface {
	Target
	Update(ctx context.Context, ns, name string) error
}

// Stats are the figures of one measurement.
type Stats struct {
	Ops        int     `json:"ops"`
	Throughput float64 `json:"opsPerSecond"`
	P50ms      float64 `json:"p50Milliseconds"`
	P99ms      float64 `json:"p99Milliseconds"`
}

// Name is the name of the i-th object of a measurement.
func Name(i int) string { return fmt.Sprintf("obj-%d", i) }

// index parses a name made by Name.
func index(name string) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(name, "obj-%d", &i); err != nil {
		return 0, false
	}
	return i, true
}

// Seed creates objects obj-0..obj-(objects-1) in ns, unmeasured, for reads and updates to act on.
func Seed(ctx context.Context, t Target, ns string, clients, objects int) error {
	return Parallel(clients, objects, func(i int) error { return t.Create(ctx, ns, Name(i)) }, nil)
}

// Creates measures count creates of new objects in ns.
func Creates(ctx context.Context, t Target, ns string, clients, count int) (Stats, error) {
	return Timed(clients, count, func(i int) error { return t.Create(ctx, ns, Name(i)) })
}

// Gets measures count gets spread over the objects seeded in ns.
func Gets(ctx context.Context, t Target, ns string, clients, count, objects int) (Stats, error) {
	return Timed(clients, count, func(i int) error { return t.Get(ctx, ns, Name(i%objects)) })
}

// Lists measures count lists of ns, each of which must return all objects seeded there.
func Lists(ctx context.Context, t Target, ns string, clients, count, objects int) (Stats, error) {
	return Timed(clients, count, func(int) error {
		got, err := t.List(ctx, ns)
		if err == nil && got != objects {
			err = fmt.Errorf("list of %s returned %d objects, want %d", ns, got, objects)
		}
		return err
	})
}

// Updates measures count updates spread over the objects seeded in ns.
func Updates(ctx context.Context, t Updater, ns string, clients, count, objects int) (Stats, error) {
	return Timed(clients, count, func(i int) error { return t.Update(ctx, ns, Name(i%objects)) })
}

// WatchDelivery creates count objects in ns and measures, for each, the delay from just before
// its create request until a watcher of ns receives it. Throughput is creates per second until
// the last event arrived.
func WatchDelivery(ctx context.Context, t Target, ns string, clients, count int, timeout time.Duration) (Stats, error) {
	sent := make([]atomic.Int64, count)
	lat := make([]time.Duration, count)
	var got atomic.Int64
	done := make(chan struct{})
	stop, err := t.Watch(ctx, ns, func(n string, at time.Time) {
		i, ok := index(n)
		if !ok || i >= count || lat[i] != 0 {
			return
		}
		lat[i] = at.Sub(time.Unix(0, sent[i].Load()))
		if got.Add(1) == int64(count) {
			close(done)
		}
	})
	if err != nil {
		return Stats{}, err
	}
	defer stop()
	start := time.Now()
	err = Parallel(clients, count, func(i int) error {
		sent[i].Store(time.Now().UnixNano())
		return t.Create(ctx, ns, Name(i))
	}, nil)
	if err != nil {
		return Stats{}, err
	}
	select {
	case <-done:
	case <-time.After(timeout):
		return Stats{}, fmt.Errorf("the watch delivered %d of %d objects created in %s within %s", got.Load(), count, ns, timeout)
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	return Summarize(lat, time.Since(start)), nil
}

// Timed runs fn(0..count-1) on clients goroutines and summarizes the latency of each call and
// the throughput of all of them.
func Timed(clients, count int, fn func(i int) error) (Stats, error) {
	lat := make([]time.Duration, count)
	start := time.Now()
	if err := Parallel(clients, count, fn, lat); err != nil {
		return Stats{}, err
	}
	return Summarize(lat, time.Since(start)), nil
}

// Parallel runs fn(0..count-1) on clients goroutines, recording each latency in lat if non-nil.
// It stops handing out work at the first error and returns it.
func Parallel(clients, count int, fn func(i int) error, lat []time.Duration) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				t0 := time.Now()
				if err := fn(i); err != nil {
					failed.Store(true)
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

// Summarize computes the median and 99th percentile of lat and the throughput over wall.
func Summarize(lat []time.Duration, wall time.Duration) Stats {
	if len(lat) == 0 {
		return Stats{}
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	pct := func(p float64) float64 {
		return float64(sorted[int(p*float64(len(sorted)-1))]) / float64(time.Millisecond)
	}
	return Stats{Ops: len(lat), Throughput: float64(len(lat)) / wall.Seconds(), P50ms: pct(0.50), P99ms: pct(0.99)}
}

// Ratio is a/b, or 0 when b is 0 (a figure that could not be measured).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
