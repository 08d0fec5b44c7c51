package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// streamTargets are the issue's: aggregation adds at most 20 % to the echo round trip and
// keeps at least 80 % of the console's and VNC's throughput.
func streamTargets(r streamsResult) []target {
	agg, direct := r.Routes["aggregated"], r.Routes["direct"]
	added := ratio(agg.EchoRoundTrip.P50, direct.EchoRoundTrip.P50) - 1
	console := ratio(agg.ConsoleBytesPerS.P50, direct.ConsoleBytesPerS.P50)
	vnc := ratio(agg.VNCBytesPerS.P50, direct.VNCBytesPerS.P50)
	return []target{
		{Name: "echo round trip p50, added by aggregation", Value: 100 * added, Limit: 20, Unit: "%", Met: added <= 0.20,
			Note: fmt.Sprintf("%.1f ms aggregated, %.1f ms direct", 1000*agg.EchoRoundTrip.P50, 1000*direct.EchoRoundTrip.P50)},
		{Name: "console throughput kept through aggregation", Value: 100 * console, Limit: 80, Unit: "%", Met: console >= 0.80, AtLeast: true,
			Note: fmt.Sprintf("%.0f KB/s aggregated, %.0f KB/s direct", agg.ConsoleBytesPerS.P50/1e3, direct.ConsoleBytesPerS.P50/1e3)},
		{Name: "VNC throughput kept through aggregation", Value: 100 * vnc, Limit: 80, Unit: "%", Met: vnc >= 0.80, AtLeast: true,
			Note: fmt.Sprintf("%.1f MB/s aggregated, %.1f MB/s direct", agg.VNCBytesPerS.P50/1e6, direct.VNCBytesPerS.P50/1e6)},
	}
}

// streamsReport writes console.txt and console.json.
func streamsReport(c config, r streamsResult, elapsed time.Duration) error {
	ts := streamTargets(r)
	doc := phaseDoc("Serial console and VNC of one running vmi-tiny on vireo-local (TCG): through kube-apiserver's aggregation and straight to the node agent, alternating in the same run", r, ts, elapsed)
	return measure.WriteResults(c.out, "console", doc, func(w io.Writer) {
		agg, direct := r.Routes["aggregated"], r.Routes["direct"]
		fmt.Fprintf(w, "Console and VNC of one running vmi-tiny (node %s, display %s), %d CPUs, TCG.\n", r.Node, r.Display, runtime.NumCPU())
		fmt.Fprintf(w, "aggregated: kube-apiserver -> vireo-apiserver -> node agent (as kubectl's user, subresources.kubevirt.io path);\n")
		fmt.Fprintf(w, "direct: straight to the node agent with vireo-apiserver's client certificate (mutual TLS). Routes alternate.\n\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\taggregated p50\tp95\tdirect p50\tp95\tratio p50\tratio p95\t")
		ms := func(name string, a, d durations) {
			fmt.Fprintf(tw, "%s (ms, n=%d)\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t\n", name, a.N, 1000*a.P50, 1000*a.P95, 1000*d.P50, 1000*d.P95,
				ratio(a.P50, d.P50), ratio(a.P95, d.P95))
		}
		ms("console first byte, cold (full TLS handshake)", agg.FirstByteCold, direct.FirstByteCold)
		ms("console first byte, warm (TLS session resumed)", agg.FirstByteWarm, direct.FirstByteWarm)
		ms("echo round trip, one typed character", agg.EchoRoundTrip, direct.EchoRoundTrip)
		rate := func(name string, scale float64, a, d numbers) {
			fmt.Fprintf(tw, "%s (n=%d)\t%.2f\t-\t%.2f\t-\t%.2f\t-\t\n", name, a.N, a.P50/scale, d.P50/scale, ratio(a.P50, d.P50))
		}
		rate(fmt.Sprintf("console throughput, KB/s (guest prints %d KiB)", consoleBytes>>10), 1e3, agg.ConsoleBytesPerS, direct.ConsoleBytesPerS)
		rate("VNC throughput, MB/s (whole-screen raw updates)", 1e6, agg.VNCBytesPerS, direct.VNCBytesPerS)
		rate("VNC whole-screen updates per second", 1, agg.VNCUpdatesPerS, direct.VNCUpdatesPerS)
		_ = tw.Flush()
		targetLines(w, ts)
		fmt.Fprintf(w, "\nFirst byte: dial -> websocket open -> Enter sent -> the shell's first byte; cold sessions make a full TLS handshake with the\n")
		fmt.Fprintf(w, "first hop, warm ones resume the client's TLS session (the hops behind it dial afresh for every upgrade either way).\n")
		fmt.Fprintf(w, "Throughput p50 is of %d runs per route; the console's is bounded by the guest's UART under TCG, VNC's by QEMU's encoder and the proxies.\n", throughputRuns)
		fmt.Fprintf(w, "Percentiles are nearest-rank. Streams phase: %.0f s.\n", elapsed.Seconds())
	})
}
