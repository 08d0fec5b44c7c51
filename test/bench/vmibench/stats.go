package main

import (
	"math"
	"slices"
	"time"
)

// durations summarizes a set of durations in seconds. Percentiles are nearest-rank: with 10
// samples p95 is the slowest, so a single straggler shows.
type durations struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50Seconds"`
	P95 float64 `json:"p95Seconds"`
	Max float64 `json:"maxSeconds"`
}

func summarize(ds []time.Duration) durations {
	if len(ds) == 0 {
		return durations{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return durations{N: len(s), P50: rank(s, 0.50).Seconds(), P95: rank(s, 0.95).Seconds(), Max: s[len(s)-1].Seconds()}
}

// rank is the nearest-rank percentile of sorted s.
func rank[T any](s []T, p float64) T {
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// numbers summarizes plain values.
type numbers struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
}

func summarizeNumbers(v []float64) numbers {
	if len(v) == 0 {
		return numbers{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return numbers{N: len(s), P50: rank(s, 0.50), Max: s[len(s)-1]}
}

// ratio is a/b, or 0 when b is 0 (a figure that could not be measured).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
