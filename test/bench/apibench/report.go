package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// result pairs the measurements of one operation and concurrency.
type result struct {
	Op      string        `json:"op"`
	Clients int           `json:"clients"`
	Vireo   measure.Stats `json:"vireo"`
	Etcd    measure.Stats `json:"etcd"`
	// ThroughputRatio is Vireo's throughput divided by raw etcd's (1 = no overhead).
	ThroughputRatio float64 `json:"throughputRatioVireoToEtcd"`
	// P50Ratio is Vireo's median latency divided by raw etcd's.
	P50Ratio float64 `json:"p50RatioVireoToEtcd"`
}

func report(dir string, n int, results []result) error {
	for i := range results {
		r := &results[i]
		r.ThroughputRatio = measure.Ratio(r.Vireo.Throughput, r.Etcd.Throughput)
		r.P50Ratio = measure.Ratio(r.Vireo.P50ms, r.Etcd.P50ms)
	}
	doc := map[string]any{
		"benchmark": "vireo-apiserver API operations vs. raw embedded etcd",
		"time":      time.Now().UTC().Format(time.RFC3339),
		"opsPerRun": n,
		"results":   results,
	}
	return measure.WriteResults(dir, "api", doc, func(w io.Writer) { writeTable(w, results) })
}

func writeTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tclients\tvireo ops/s\tp50 ms\tp99 ms\tetcd ops/s\tp50 ms\tp99 ms\tthroughput vireo/etcd\tp50 vireo/etcd\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Op, r.Clients,
			r.Vireo.Throughput, r.Vireo.P50ms, r.Vireo.P99ms, r.Etcd.Throughput, r.Etcd.P50ms, r.Etcd.P99ms,
			r.ThroughputRatio, r.P50Ratio)
	}
	tw.Flush()
}
