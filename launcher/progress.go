package launcher

import (
	"fmt"
	"math"
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
	// dataTotal is the most data the job has reported to send (it grows as libvirt adds the
	// memory to the disks it copies first).
	dataTotal uint64
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
	w.dataTotal = max(w.dataTotal, s.DataTotal)
	limit := completionLimit(w.req.CompletionTimeoutPerGiB, w.dataTotal)
	if limit > 0 && now.Sub(w.start) > limit && !w.postCopy {
		if w.req.AllowPostCopy {
			w.postCopy = true
			return actionPostCopy
		}
		return fmt.Sprintf("aborted: not completed within %s (completionTimeoutPerGiB %s for %.2f GiB of memory and disks, counted as %d GiB)",
			limit.Round(time.Second), w.req.CompletionTimeoutPerGiB, float64(w.dataTotal)/(1<<30), dataGiB(w.dataTotal))
	}
	return ""
}

// completionLimit is perGiB times the data to send in whole GiB, at least one (0: no limit).
// KubeVirt also counts whole units, rounded up (of 10^9 bytes: this gives a little more time):
// a guest of 128 MiB gets the full 150 s by default. Counting fractions would give a tiny
// total a limit of a few milliseconds: the first statistics of a migration may count only a
// small disk copied before the memory (a cloud-init disk: 0.35 MiB, a limit of 0.05 s).
func completionLimit(perGiB time.Duration, total uint64) time.Duration {
	if perGiB <= 0 {
		return 0
	}
	gib := dataGiB(total)
	if uint64(perGiB) > math.MaxInt64/gib {
		return math.MaxInt64 // saturates rather than overflowing into no limit
	}
	return perGiB * time.Duration(gib)
}

// dataGiB is total bytes in GiB, rounded up, at least one.
func dataGiB(total uint64) uint64 {
	return max(1, (total+1<<30-1)>>30)
}
