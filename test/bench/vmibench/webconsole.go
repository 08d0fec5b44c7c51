package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/internal/webui"
	"github.com/vireo-dev/vireo/internal/webui/assets"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// webConsoleLoadLimit is issue 34's goal: the console loads in under 1 s on loopback.
const webConsoleLoadLimit = time.Second

// webConsoleResult is the web console phase: per figure, over the runs.
type webConsoleResult struct {
	Runs int `json:"runs"`
	VMs  int `json:"vms"`
	// ConsoleLoad is the console's load event from `vireoctl ui`'s server (the token exchange's
	// redirect included); StaticLoad the same assets' from a plain file server.
	ConsoleLoad durations `json:"consoleLoad"`
	StaticLoad  durations `json:"staticLoad"`
	// ConsoleRows is from the navigation's start until the VM table shows every VM; ListFetch one
	// list of those VMs fetched from the loaded page through the same proxy.
	ConsoleRows durations `json:"consoleRows"`
	ListFetch   durations `json:"listFetch"`
}

// webConsoleRun is one run as web/test/bench.mjs writes it, in milliseconds.
type webConsoleRun struct {
	ConsoleLoad float64 `json:"consoleLoad"`
	StaticLoad  float64 `json:"staticLoad"`
	ConsoleRows float64 `json:"consoleRows"`
	ListFetch   float64 `json:"listFetch"`
}

// webConsole creates c.uiVMs stopped VMs, serves the console (as `vireoctl ui` does, with the
// benchmark's admin credentials) and the same assets from a plain file server on loopback, and
// has web/test/bench.mjs load each in turn in headless Chromium.
func (e *env) webConsole(ctx context.Context) (res webConsoleResult, err error) {
	res.VMs = e.c.uiVMs
	names, deleteVMs, err := e.createHaltedVMs(ctx, "ui", e.c.uiVMs)
	defer func() { err = errors.Join(err, deleteVMs()) }()
	if err != nil {
		return res, err
	}
	files, err := assets.FS()
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	console, err := webui.New(webui.Options{REST: e.cl.cfg, Assets: files})
	if err != nil {
		return res, err
	}
	go func() { _ = console.Serve(ctx) }()
	staticURL, err := serveFiles(ctx, http.FileServerFS(files))
	if err != nil {
		return res, err
	}
	say("web console: %d loads of the console (%d VMs listed) and of the same assets from a file server, in turn", e.c.uiRuns, len(names))
	runs, err := e.runBrowserBench(ctx, console.URL(), staticURL)
	if err != nil {
		return res, err
	}
	res.Runs = len(runs)
	res.ConsoleLoad, res.StaticLoad = summarizeMillis(runs, func(r webConsoleRun) float64 { return r.ConsoleLoad }),
		summarizeMillis(runs, func(r webConsoleRun) float64 { return r.StaticLoad })
	res.ConsoleRows, res.ListFetch = summarizeMillis(runs, func(r webConsoleRun) float64 { return r.ConsoleRows }),
		summarizeMillis(runs, func(r webConsoleRun) float64 { return r.ListFetch })
	return res, nil
}

// serveFiles serves h on a free loopback port until ctx ends and returns its URL.
func serveFiles(ctx context.Context, h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/", nil
}

// runBrowserBench runs web/test/bench.mjs and returns its runs.
func (e *env) runBrowserBench(ctx context.Context, consoleURL, staticURL string) ([]webConsoleRun, error) {
	dir, err := os.MkdirTemp("", "vmibench-ui-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := map[string]any{"consoleURL": consoleURL, "staticURL": staticURL, "ns": benchNS, "vms": e.c.uiVMs,
		"runs": e.c.uiRuns, "chromium": e.c.chromium, "out": filepath.Join(dir, "result.json")}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cfgFile := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(e.c.web, "test", "bench.mjs"))
	cmd.Env = append(os.Environ(), "VIREO_UI_BENCH="+cfgFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("web/test/bench.mjs: %w: %s", err, out)
	}
	var doc struct {
		Runs []webConsoleRun `json:"runs"`
	}
	b, err = os.ReadFile(cfg["out"].(string))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("web/test/bench.mjs's result: %w", err)
	}
	if len(doc.Runs) == 0 {
		return nil, errors.New("web/test/bench.mjs measured no run")
	}
	return doc.Runs, nil
}

// summarizeMillis summarizes one figure of the runs, given in milliseconds.
func summarizeMillis(runs []webConsoleRun, figure func(webConsoleRun) float64) durations {
	ds := make([]time.Duration, len(runs))
	for i, r := range runs {
		ds[i] = time.Duration(figure(r) * float64(time.Millisecond))
	}
	return summarize(ds)
}

// webConsoleTargets is issue 34's goal, measured from the console's own server.
func webConsoleTargets(r webConsoleResult) []target {
	limit := webConsoleLoadLimit.Seconds()
	return []target{{Name: "web console load p95", Value: r.ConsoleLoad.P95, Limit: limit, Unit: "s", Met: r.ConsoleLoad.P95 <= limit,
		FloorRatio: ratio(r.ConsoleLoad.P95, r.StaticLoad.P95),
		Note:       fmt.Sprintf("p50 %.0f ms; the same assets from a plain file server p50 %.0f ms", 1000*r.ConsoleLoad.P50, 1000*r.StaticLoad.P50)}}
}

// webConsoleReport writes webconsole.txt and webconsole.json.
func webConsoleReport(c config, r webConsoleResult, elapsed time.Duration) error {
	ts := webConsoleTargets(r)
	doc := phaseDoc("The web console's page in headless Chromium on loopback: served by vireoctl ui's server (token exchange included), against the same assets from a plain file server, each load in a fresh browser context, taking turns; then the time until the VM table shows a namespace's VMs, against one list of them fetched through the same proxy", r, ts, elapsed)
	return measure.WriteResults(c.out, "webconsole", doc, func(w io.Writer) {
		fmt.Fprintf(w, "The web console in headless Chromium on loopback, %d CPUs; %d loads of each, in fresh browser contexts (empty cache), taking turns.\n", runtime.NumCPU(), r.Runs)
		fmt.Fprintf(w, "console: vireoctl ui's server (the printed URL: token exchange, redirect, then the page); file server: the same assets, no checks.\n\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "(ms)\tconsole p50\tp95\tbaseline p50\tp95\tratio p50\tratio p95\t")
		row := func(name string, a, b durations) {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t\n", name, 1000*a.P50, 1000*a.P95, 1000*b.P50, 1000*b.P95, ratio(a.P50, b.P50), ratio(a.P95, b.P95))
		}
		row("page load (baseline: file server)", r.ConsoleLoad, r.StaticLoad)
		row(fmt.Sprintf("%d VMs shown (baseline: their list fetched)", r.VMs), r.ConsoleRows, r.ListFetch)
		_ = tw.Flush()
		fmt.Fprintf(w, "\nTimes are the browser's, from the navigation's start; the VMs shown include the page's load and its list and watch requests. Percentiles are nearest-rank.\n")
		targetLines(w, ts)
		fmt.Fprintf(w, "Phase: %.0f s.\n", elapsed.Seconds())
	})
}
