package main

import (
	"io"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

func report(dir string, n int, results []measure.Comparison) error {
	doc := map[string]any{
		"benchmark": "vireo-apiserver API operations vs. raw embedded etcd (the baseline)",
		"time":      time.Now().UTC().Format(time.RFC3339),
		"opsPerRun": n,
		"results":   results,
	}
	return measure.WriteResults(dir, "api", doc, func(w io.Writer) { measure.WriteTable(w, "etcd", results) })
}
