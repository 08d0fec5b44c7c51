package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// curve is one line of a plot: a figure of one target at every size.
type curve struct {
	name   string
	target func(s *sizeResult) *targetResult
	value  func(t *targetResult) (float64, bool)
}

// plot draws the curves that say more than the tables once there are two sizes or more:
// the full list's latency, the servers' memory and the watch fan-out, against the VMIs stored.
func (r *report) plot(dir string) error {
	if len(r.Sizes) < 2 {
		return nil
	}
	vireo := func(s *sizeResult) *targetResult { return &s.Vireo }
	crd := func(s *sizeResult) *targetResult { return s.CRD }
	list := func(i int) func(t *targetResult) (float64, bool) {
		return func(t *targetResult) (float64, bool) {
			if i >= len(t.Lists) {
				return 0, false
			}
			return t.Lists[i].P50ms, true
		}
	}
	listProtobuf := func(t *targetResult) (float64, bool) {
		if l := t.fullListProtobuf(); l != nil {
			return l.P50ms, true
		}
		return 0, false
	}
	rss := func(proc string) func(t *targetResult) (float64, bool) {
		return func(t *targetResult) (float64, bool) { return float64(t.Usage.Memory[proc].RSS) / mib, true }
	}
	fanout := func(t *targetResult) (float64, bool) { return t.Fanout.P99ms, t.Fanout.Ops > 0 }
	plots := []struct {
		file, title, y string
		curves         []curve
	}{
		{"scale-list.png", "List of every VMI, unpaged (p50)", "ms", []curve{{"vireo", vireo, list(0)}, {"vireo protobuf", vireo, listProtobuf}, {"crd", crd, list(0)}}},
		{"scale-memory.png", "Resident memory after each wave", "MiB", []curve{
			{"vireo-apiserver (with its etcd)", vireo, rss("vireo-apiserver")},
			{"kube-apiserver", vireo, rss("kube-apiserver")}, {"cluster etcd", vireo, rss("etcd")}}},
		{"scale-fanout.png", "Watch fan-out to the VMI's node watch (p99)", "ms", []curve{{"vireo", vireo, fanout}, {"crd", crd, fanout}}},
	}
	for _, p := range plots {
		if err := r.drawPlot(filepath.Join(dir, p.file), p.title, p.y, p.curves); err != nil {
			return fmt.Errorf("plotting %s: %w", p.file, err)
		}
	}
	return nil
}

func (r *report) drawPlot(file, title, yLabel string, curves []curve) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "VMIs stored"
	p.Y.Label.Text = yLabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	var lines []any
	for _, c := range curves {
		var pts plotter.XYs
		for i := range r.Sizes {
			t := c.target(&r.Sizes[i])
			if t == nil {
				continue
			}
			if v, ok := c.value(t); ok {
				pts = append(pts, plotter.XY{X: float64(r.Sizes[i].VMIs), Y: v})
			}
		}
		if len(pts) > 0 {
			lines = append(lines, c.name, pts)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}
