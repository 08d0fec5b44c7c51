// Package gomemlimit gives a long-running Vireo binary a Go soft memory limit below its
// container's memory limit, so that the garbage collector works harder as the process nears
// the limit instead of the kernel killing it there. An operator's GOMEMLIMIT (or
// AUTOMEMLIMIT=off, or a ratio in AUTOMEMLIMIT) takes precedence; without a container limit
// nothing changes.
package gomemlimit

import (
	"log/slog"
	"math"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// Ratio is the share of the container's memory limit the Go runtime may grow to, for a process
// whose memory is the Go runtime's; the rest is left to what the runtime does not count.
const Ratio = 0.9

// RatioWithMappedDatabase is the share for a process that also maps a database file into its
// memory: vireo-apiserver with its embedded etcd, whose bbolt maps the whole database (578 MiB
// at 100,000 VMIs). Those pages count in the process's RSS and in the container's memory: at
// 0.9 the peak RSS at 100,000 VMIs was 4,150 MiB under a 4 GiB limit.
const RatioWithMappedDatabase = 0.8

// FromContainer sets the soft limit to ratio of the cgroup's memory limit and says what it set.
func FromContainer(ratio float64) {
	logger := slog.New(logr.ToSlogHandler(klog.Background()))
	limit, err := memlimit.Set(memlimit.WithRatio(ratio), memlimit.WithProvider(memlimit.FromCgroup), memlimit.WithLogger(logger))
	switch {
	case err != nil:
		klog.InfoS("No Go memory limit from the container's cgroup", "reason", err)
	case limit != math.MaxInt64:
		klog.InfoS("Go soft memory limit", "bytes", limit)
	}
}
