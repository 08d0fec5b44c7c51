package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// figures are the day-2 measurements the e2e tests make on the way (HA failover, restore):
// written at the end of the run to _output/bench/day2.json and day2.txt, beside make bench's.
var figures = struct {
	sync.Mutex
	m map[string]figure
}{m: map[string]figure{}}

// figure is one measurement, named by what it is.
type figure struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	What  string  `json:"what"`
}

// recordFigure keeps a measurement under key (the last one wins).
func recordFigure(key string, value float64, unit, what string) {
	figures.Lock()
	defer figures.Unlock()
	figures.m[key] = figure{Value: value, Unit: unit, What: what}
}

// writeFigures writes the figures recorded, if any, to dir/day2.json and dir/day2.txt.
func writeFigures(dir string) error {
	figures.Lock()
	defer figures.Unlock()
	if len(figures.m) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(figures.m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "day2.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var txt strings.Builder
	txt.WriteString("Day 2 (e2e, two local nodes, HA control plane)\n")
	keys := make([]string, 0, len(figures.m))
	for k := range figures.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := figures.m[k]
		fmt.Fprintf(&txt, "%-36s %10.3f %-8s %s\n", k, f.Value, f.Unit, f.What)
	}
	return os.WriteFile(filepath.Join(dir, "day2.txt"), []byte(txt.String()), 0o644)
}
