package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// callCounts are the calls between servers the measurements caused: admission reviews the
// webhook server answered (the CRD's cost) and SubjectAccessReviews kube-apiserver answered
// (mostly vireo-apiserver's delegated authorization).
type callCounts struct {
	Mutating             int64 `json:"mutatingReviews"`
	Validating           int64 `json:"validatingReviews"`
	SubjectAccessReviews int64 `json:"subjectAccessReviews"`
}

func report(c config, results []measure.Comparison, calls callCounts, sizes objectSizes) error {
	doc := map[string]any{
		"benchmark":               "VirtualMachineInstance through kube-apiserver: Vireo's aggregated API (kubevirt.io/v1) vs. the same schema as a CRD with mutating and validating webhooks (bench.vireo.dev/v1)",
		"time":                    time.Now().UTC().Format(time.RFC3339),
		"cpus":                    runtime.NumCPU(),
		"opsPerRun":               c.ops,
		"listAndUpdateObjects":    c.objects,
		"crdStatusSubresource":    c.statusSubresource,
		"callsDuringMeasurements": calls,
		"storedObjectSizes":       sizes,
		"results":                 results, // baseline = the CRD
	}
	return measure.WriteResults(c.out, "aggregation", doc, func(w io.Writer) {
		measure.WriteTable(w, "crd", results)
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
