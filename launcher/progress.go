package launcher

import (
	"fmt"
	"time"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// actionPostCopy is progressWatch.check's answer to switch a migration to post-copy.
const actionPostCopy = "postcopy"

// progressWatch applies a migration's timeouts (KubeVirt's progressTimeout and
// completionTimeoutPerGiB) to its job statistics.
type progressWatch struct {
	req            protocol.MigrateRequest
	start          time.Time
	leastRemaining uint64
	lastProgress   time.Time
	postCopy       bool
}

func newProgressWatch(req protocol.MigrateRequest, now time.Time) *progressWatch {
	return &progressWatch{req: req, start: now, lastProgress: now}
}

// check returns what to do given the statistics at now: "" (go on), actionPostCopy, or the
// reason to abort.
func (w *progressWatch) check(s virt.JobStats, now time.Time) string {
	if w.leastRemaining == 0 || s.DataRemaining < w.leastRemaining {
		w.leastRemaining, w.lastProgress = s.DataRemaining, now
	}
	if t := w.req.ProgressTimeout; t > 0 && now.Sub(w.lastProgress) > t && !w.postCopy {
		return fmt.Sprintf("aborted: no progress for %s (progressTimeout %s)", now.Sub(w.lastProgress).Round(time.Second), t)
	}
	limit := completionLimit(w.req.CompletionTimeoutPerGiB, s.DataTotal)
	if limit > 0 && now.Sub(w.start) > limit && !w.postCopy {
		if w.req.AllowPostCopy {
			w.postCopy = true
			return actionPostCopy
		}
		return fmt.Sprintf("aborted: not completed within %s (completionTimeoutPerGiB %s for %.2f GiB)",
			limit.Round(time.Second), w.req.CompletionTimeoutPerGiB, float64(s.DataTotal)/(1<<30))
	}
	return ""
}

// completionLimit is perGiB times the data to send in GiB (0: no limit).
func completionLimit(perGiB time.Duration, total uint64) time.Duration {
	if perGiB <= 0 || total == 0 {
		return 0
	}
	return time.Duration(float64(perGiB) * float64(total) / (1 << 30))
}
