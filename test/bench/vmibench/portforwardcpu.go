package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// downloadCPU adds up where the machine's CPU went during a route's downloads (from request to
// last byte): it shows what a route's hops cost, and whether the guest's QEMU was starved.
type downloadCPU struct {
	window, hostBusy float64
	byRole           map[string]float64
	bytes            int64
}

func (d *downloadCPU) add(c startCPU, bytes int64) {
	if d.byRole == nil {
		d.byRole = map[string]float64{}
	}
	d.window += c.Window
	d.hostBusy += c.HostBusy
	d.bytes += bytes
	for role, s := range c.ByRole {
		d.byRole[role] += s
	}
}

// routeCPU is downloadCPU per byte: what one route's downloads cost.
type routeCPU struct {
	// BusyCores is the machine's busy CPU time over the downloads' time, in cores.
	BusyCores float64 `json:"busyCores"`
	// CoreSecondsPerGB are the CPU seconds each kind of process spent per GB downloaded (kinds
	// under 1 % of the machine's busy time are left out).
	CoreSecondsPerGB map[string]float64 `json:"coreSecondsPerGB"`
}

func (d downloadCPU) perGB() routeCPU {
	r := routeCPU{CoreSecondsPerGB: map[string]float64{}}
	if d.window <= 0 || d.bytes == 0 {
		return r
	}
	r.BusyCores = d.hostBusy / d.window
	for role, s := range d.byRole {
		if s >= 0.01*d.hostBusy {
			r.CoreSecondsPerGB[role] = s / (float64(d.bytes) / 1e9)
		}
	}
	return r
}

// writeDownloadCPU prints the two routes' CPU per GB side by side, the biggest spenders first.
func writeDownloadCPU(w io.Writer, agg, direct routeCPU) {
	roles := slices.Collect(maps.Keys(agg.CoreSecondsPerGB))
	for role := range direct.CoreSecondsPerGB {
		if _, ok := agg.CoreSecondsPerGB[role]; !ok {
			roles = append(roles, role)
		}
	}
	slices.SortFunc(roles, func(a, b string) int {
		return cmp.Compare(agg.CoreSecondsPerGB[b]+direct.CoreSecondsPerGB[b], agg.CoreSecondsPerGB[a]+direct.CoreSecondsPerGB[a])
	})
	parts := make([]string, 0, len(roles))
	for _, role := range roles {
		parts = append(parts, fmt.Sprintf("%s %.1f / %.1f", role, agg.CoreSecondsPerGB[role], direct.CoreSecondsPerGB[role]))
	}
	fmt.Fprintf(w, "CPU during the downloads, core-seconds per GB, aggregated / direct: %s; the machine's busy cores %.2f / %.2f.\n",
		strings.Join(parts, ", "), agg.BusyCores, direct.BusyCores)
}
