package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// portForwardTargets are the issue's: through kube-apiserver at least 80 % of the direct
// throughput and at most 1.2x its round trip.
func portForwardTargets(r portForwardResult) []target {
	agg, direct := r.Routes["aggregated"], r.Routes["direct"]
	rtt := ratio(agg.EchoRoundTrip.P50, direct.EchoRoundTrip.P50)
	kept := ratio(agg.DownloadBytesPS.P50, direct.DownloadBytesPS.P50)
	return []target{
		{Name: "port-forward round trip p50, times the direct one", Value: rtt, Limit: 1.2, Unit: "x", Met: rtt <= 1.2,
			Note: fmt.Sprintf("%.2f ms aggregated, %.2f ms direct", 1000*agg.EchoRoundTrip.P50, 1000*direct.EchoRoundTrip.P50)},
		{Name: "port-forward throughput kept", Value: 100 * kept, Limit: 80, Unit: "%", Met: kept >= 0.80, AtLeast: true,
			Note: fmt.Sprintf("%.1f MB/s aggregated, %.1f MB/s direct", agg.DownloadBytesPS.P50/1e6, direct.DownloadBytesPS.P50/1e6)},
	}
}

// portForwardReport writes portforward.txt and portforward.json.
func portForwardReport(c config, r portForwardResult, elapsed time.Duration) error {
	ts := portForwardTargets(r)
	doc := phaseDoc("Port-forward to one running test guest on vireo-local (TCG): through kube-apiserver's port-forward subresource and a TCP connection straight to the Pod's address, alternating in the same run; the guest agent's round trip", r, ts, elapsed)
	return measure.WriteResults(c.out, "portforward", doc, func(w io.Writer) {
		agg, direct := r.Routes["aggregated"], r.Routes["direct"]
		fmt.Fprintf(w, "Port-forward to one running test guest (node %s), %d CPUs, TCG; the guest's ports reached by the masquerade binding's DNAT.\n", r.Node, runtime.NumCPU())
		fmt.Fprintf(w, "aggregated: websocket to kube-apiserver -> vireo-apiserver -> TCP to the Pod (subresources.kubevirt.io .../portforward/PORT);\n")
		fmt.Fprintf(w, "direct: a TCP connection from the host straight to the Pod's address. Routes alternate.\n\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\taggregated p50\tp95\tdirect p50\tp95\tratio p50\tratio p95\t")
		fmt.Fprintf(tw, "echo round trip, 1 byte (ms, n=%d)\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", agg.EchoRoundTrip.N,
			1000*agg.EchoRoundTrip.P50, 1000*agg.EchoRoundTrip.P95, 1000*direct.EchoRoundTrip.P50, 1000*direct.EchoRoundTrip.P95,
			ratio(agg.EchoRoundTrip.P50, direct.EchoRoundTrip.P50), ratio(agg.EchoRoundTrip.P95, direct.EchoRoundTrip.P95))
		fmt.Fprintf(tw, "download of %d MiB, MB/s (n=%d)\t%.2f\t-\t%.2f\t-\t%.2f\t-\t\n", bigFileMiB, agg.DownloadBytesPS.N,
			agg.DownloadBytesPS.P50/1e6, direct.DownloadBytesPS.P50/1e6, ratio(agg.DownloadBytesPS.P50, direct.DownloadBytesPS.P50))
		fmt.Fprintf(tw, "connection open (ms, n=%d)\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", agg.Open.N,
			1000*agg.Open.P50, 1000*agg.Open.P95, 1000*direct.Open.P50, 1000*direct.Open.P95,
			ratio(agg.Open.P50, direct.Open.P50), ratio(agg.Open.P95, direct.Open.P95))
		_ = tw.Flush()
		fmt.Fprintf(w, "\nGuest agent round trip (guestosinfo through kube-apiserver, vireo-apiserver, node agent, launcher, qemu-ga; n=%d): p50 %.1f ms, p95 %.1f ms, max %.1f ms.\n",
			r.Agent.N, 1000*r.Agent.P50, 1000*r.Agent.P95, 1000*r.Agent.Max)
		writeDownloadCPU(w, agg.CPU, direct.CPU)
		fmt.Fprintf(w, "A download is timed from its request to its last byte; opening the connection (TLS with kube-apiserver, the upgrade, the dial of the guest) is the line above.\n")
		targetLines(w, ts)
		fmt.Fprintf(w, "\nThe guest runs under TCG: its network stack and web server bound both routes alike. Percentiles are nearest-rank. Phase: %.0f s.\n", elapsed.Seconds())
	})
}
