package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// result pairs the measurements of one operation and concurrency.
type result struct {
	Op      string        `json:"op"`
	Clients int           `json:"clients"`
	Vireo   measure.Stats `json:"vireo"`
	CRD     measure.Stats `json:"crd"`
	// Ratios are Vireo's figure divided by the CRD's: above 1 is better for throughput, below 1
	// is better for latency.
	ThroughputRatio float64 `json:"throughputRatioVireoToCRD"`
	P50Ratio        float64 `json:"p50RatioVireoToCRD"`
	P99Ratio        float64 `json:"p99RatioVireoToCRD"`
}

func newResult(op string, clients int, vireo, crd measure.Stats) result {
	return result{
		Op: op, Clients: clients, Vireo: vireo, CRD: crd,
		ThroughputRatio: measure.Ratio(vireo.Throughput, crd.Throughput),
		P50Ratio:        measure.Ratio(vireo.P50ms, crd.P50ms),
		P99Ratio:        measure.Ratio(vireo.P99ms, crd.P99ms),
	}
}

// callCounts are the calls between servers the measurements caused: admission reviews the
// webhook server answered (the CRD's cost) and SubjectAccessReviews kube-apiserver answered
// (mostly vireo-apiserver's delegated authorization).
type callCounts struct {
	Mutating             int64 `json:"mutatingReviews"`
	Validating           int64 `json:"validatingReviews"`
	SubjectAccessReviews int64 `json:"subjectAccessReviews"`
}

func report(c config, results []result, calls callCounts, sizes objectSizes) error {
	doc := map[string]any{
		"benchmark":               "VirtualMachineInstance through kube-apiserver: Vireo's aggregated API (kubevirt.io/v1) vs. the same schema as a CRD with mutating and validating webhooks (bench.vireo.dev/v1)",
		"time":                    time.Now().UTC().Format(time.RFC3339),
		"cpus":                    runtime.NumCPU(),
		"opsPerRun":               c.ops,
		"listAndUpdateObjects":    c.objects,
		"crdStatusSubresource":    c.statusSubresource,
		"callsDuringMeasurements": calls,
		"storedObjectSizes":       sizes,
		"results":                 results,
	}
	return measure.WriteResults(c.out, "aggregation", doc, func(w io.Writer) {
		writeTable(w, results)
		fmt.Fprintf(w, "\nvireo = kubevirt.io/v1 served by vireo-apiserver through aggregation; crd = the same schema as a CRD (status subresource: %v) with webhooks; client: %s.\n", c.statusSubresource, clientName(c))
		fmt.Fprintf(w, "During the measurements the webhooks answered %d mutating and %d validating reviews; kube-apiserver answered %d SubjectAccessReviews (vireo-apiserver's delegated authorization).\n",
			calls.Mutating, calls.Validating, calls.SubjectAccessReviews)
		fmt.Fprintf(w, "One stored object is %d bytes of JSON from Vireo, %d from the CRD; list returns %d of them.\n", sizes.Vireo, sizes.CRD, c.objects)
		fmt.Fprintln(w, "Ratios are vireo/crd: for throughput above 1 favours Vireo, for latency below 1 does.")
	})
}

func clientName(c config) string {
	if c.rbacUser {
		return "user " + benchUser + " (RBAC)"
	}
	return "admin (system:masters)"
}

func writeTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tclients\tvireo ops/s\tp50 ms\tp99 ms\tcrd ops/s\tp50 ms\tp99 ms\tops/s vireo/crd\tp50 vireo/crd\tp99 vireo/crd\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Op, r.Clients,
			r.Vireo.Throughput, r.Vireo.P50ms, r.Vireo.P99ms, r.CRD.Throughput, r.CRD.P50ms, r.CRD.P99ms,
			r.ThroughputRatio, r.P50Ratio, r.P99Ratio)
	}
	tw.Flush()
}
