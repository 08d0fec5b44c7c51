package measure

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(100-i) * time.Millisecond // 100ms .. 1ms, unsorted
	}
	s := Summarize(lat, 2*time.Second)
	if s.Ops != 100 || s.Throughput != 50 || s.P50ms != 50 || s.P99ms != 99 {
		t.Errorf("Summarize = %+v, want 100 ops, 50/s, p50 50ms, p99 99ms", s)
	}
}

func TestParallel(t *testing.T) {
	var sum atomic.Int64
	if err := Parallel(8, 1000, func(i int) error { sum.Add(int64(i)); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if sum.Load() != 999*1000/2 {
		t.Errorf("Parallel ran each index once? sum = %d", sum.Load())
	}
	var calls atomic.Int64
	boom := errors.New("boom")
	err := Parallel(4, 1000, func(int) error { calls.Add(1); return boom }, nil)
	if !errors.Is(err, boom) || calls.Load() > 4 {
		t.Errorf("Parallel after an error: err=%v calls=%d, want boom and at most one call per client", err, calls.Load())
	}
}
