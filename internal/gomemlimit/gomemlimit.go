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

// Ratio is the share of the container's memory limit the Go heap may grow to; the rest is
// left to stacks, mapped files and what the runtime does not count.
const Ratio = 0.9

// FromContainer sets the soft limit from the cgroup's memory limit and says what it set.
func FromContainer() {
	logger := slog.New(logr.ToSlogHandler(klog.Background()))
	limit, err := memlimit.Set(memlimit.WithRatio(Ratio), memlimit.WithProvider(memlimit.FromCgroup), memlimit.WithLogger(logger))
	switch {
	case err != nil:
		klog.InfoS("No Go memory limit from the container's cgroup", "reason", err)
	case limit != math.MaxInt64:
		klog.InfoS("Go soft memory limit", "bytes", limit)
	}
}
