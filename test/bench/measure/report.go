package measure

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// WriteResults writes doc to <dir>/<base>.json and the table that write prints to
// <dir>/<base>.txt and to standard output.
func WriteResults(dir, base string, doc any, write func(io.Writer)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	jsonFile, txtFile := filepath.Join(dir, base+".json"), filepath.Join(dir, base+".txt")
	if err := os.WriteFile(jsonFile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(txtFile)
	if err != nil {
		return err
	}
	write(io.MultiWriter(os.Stdout, f))
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nwritten: %s, %s\n", txtFile, jsonFile)
	return nil
}

// Comparison is one operation at one concurrency, measured on Vireo and on a baseline run
// in the same process. Ratios are Vireo's figure divided by the baseline's: above 1 favours
// Vireo for throughput, below 1 for latency.
type Comparison struct {
	Op              string  `json:"op"`
	Clients         int     `json:"clients"`
	Vireo           Stats   `json:"vireo"`
	Baseline        Stats   `json:"baseline"`
	ThroughputRatio float64 `json:"throughputRatio"`
	P50Ratio        float64 `json:"p50Ratio"`
	P99Ratio        float64 `json:"p99Ratio"`
}

// Compare pairs the two measurements and computes their ratios.
func Compare(op string, clients int, vireo, baseline Stats) Comparison {
	return Comparison{
		Op: op, Clients: clients, Vireo: vireo, Baseline: baseline,
		ThroughputRatio: Ratio(vireo.Throughput, baseline.Throughput),
		P50Ratio:        Ratio(vireo.P50ms, baseline.P50ms),
		P99Ratio:        Ratio(vireo.P99ms, baseline.P99ms),
	}
}

// WriteTable prints comparisons as a table; baseline names the baseline's columns.
func WriteTable(w io.Writer, baseline string, results []Comparison) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "op\tclients\tvireo ops/s\tp50 ms\tp99 ms\t%[1]s ops/s\tp50 ms\tp99 ms\tops/s vireo/%[1]s\tp50 vireo/%[1]s\tp99 vireo/%[1]s\t\n", baseline)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Op, r.Clients,
			r.Vireo.Throughput, r.Vireo.P50ms, r.Vireo.P99ms, r.Baseline.Throughput, r.Baseline.P50ms, r.Baseline.P99ms,
			r.ThroughputRatio, r.P50Ratio, r.P99Ratio)
	}
	tw.Flush()
}
