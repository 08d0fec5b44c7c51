package launcher

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

func TestProgressWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	req := protocol.MigrateRequest{ProgressTimeout: 10 * time.Second, CompletionTimeoutPerGiB: 4 * time.Second}
	const quarterGiB = 1 << 28 // counted as 1 GiB: limit 4 s

	w := newProgressWatch(req, t0)
	// A migration's first statistics may count only a small disk copied before the memory.
	if a := w.check(virt.JobStats{DataTotal: 374784, DataRemaining: 374784}, t0.Add(time.Second)); a != "" {
		t.Fatalf("early, a cloud-init disk only: %q", a)
	}
	if a := w.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 50}, t0.Add(3900*time.Millisecond)); a != "" {
		t.Fatalf("progressing: %q", a)
	}
	if a := w.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 40}, t0.Add(4100*time.Millisecond)); !strings.Contains(a, "completionTimeoutPerGiB") {
		t.Fatalf("past the completion limit: %q", a)
	}
	big := newProgressWatch(req, t0) // 2.5 GiB: counted as 3, limit 12 s
	big.check(virt.JobStats{DataTotal: 5 << 29, DataRemaining: 5 << 29}, t0.Add(time.Second))
	if a := big.check(virt.JobStats{DataTotal: 5 << 29, DataRemaining: 1 << 20}, t0.Add(11*time.Second)); a != "" {
		t.Fatalf("a large guest within its limit: %q", a)
	}
	if a := big.check(virt.JobStats{DataTotal: 5 << 29, DataRemaining: 1 << 19}, t0.Add(13*time.Second)); !strings.Contains(a, "for 2.50 GiB of memory and disks, counted as 3 GiB") {
		t.Fatalf("a large guest past its limit: %q", a)
	}

	stalled := newProgressWatch(protocol.MigrateRequest{ProgressTimeout: 10 * time.Second}, t0)
	stalled.check(virt.JobStats{DataTotal: 1 << 30, DataRemaining: 100}, t0.Add(time.Second))
	if a := stalled.check(virt.JobStats{DataTotal: 1 << 30, DataRemaining: 120}, t0.Add(10*time.Second)); a != "" {
		t.Fatalf("within the progress timeout: %q", a)
	}
	if a := stalled.check(virt.JobStats{DataTotal: 1 << 30, DataRemaining: 100}, t0.Add(12*time.Second)); !strings.Contains(a, "progressTimeout") {
		t.Fatalf("stalled: %q", a)
	}

	req.AllowPostCopy = true
	pc := newProgressWatch(req, t0)
	if a := pc.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 60}, t0.Add(5*time.Second)); a != actionPostCopy {
		t.Fatalf("post-copy allowed: %q", a)
	}
	if a := pc.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 60}, t0.Add(30*time.Second)); a != "" {
		t.Fatalf("in post-copy: %q", a)
	}
}

// TestCompletionLimitSaturates: a completionTimeoutPerGiB of centuries times a large guest is
// the longest limit there is, not an overflow into a negative one (no limit at all).
func TestCompletionLimitSaturates(t *testing.T) {
	if got := completionLimit(math.MaxInt64/2, 4<<30); got != math.MaxInt64 {
		t.Errorf("completionLimit(MaxInt64/2, 4 GiB) = %v, want the maximum", got)
	}
	if got := completionLimit(150*time.Second, 3<<30); got != 450*time.Second {
		t.Errorf("completionLimit(150s, 3 GiB) = %v, want 7m30s", got)
	}
}
