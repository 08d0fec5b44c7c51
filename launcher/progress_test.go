package launcher

import (
	"strings"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

func TestProgressWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	req := protocol.MigrateRequest{ProgressTimeout: 10 * time.Second, CompletionTimeoutPerGiB: 40 * time.Second}
	const quarterGiB = 1 << 28 // limit: 10 s

	w := newProgressWatch(req, t0)
	if a := w.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 100}, t0.Add(time.Second)); a != "" {
		t.Fatalf("early: %q", a)
	}
	if a := w.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 50}, t0.Add(9*time.Second)); a != "" {
		t.Fatalf("progressing: %q", a)
	}
	if a := w.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 60}, t0.Add(11*time.Second)); !strings.Contains(a, "completionTimeoutPerGiB") {
		t.Fatalf("past the completion limit: %q", a)
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
	if a := pc.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 60}, t0.Add(11*time.Second)); a != actionPostCopy {
		t.Fatalf("post-copy allowed: %q", a)
	}
	if a := pc.check(virt.JobStats{DataTotal: quarterGiB, DataRemaining: 60}, t0.Add(30*time.Second)); a != "" {
		t.Fatalf("in post-copy: %q", a)
	}
}
