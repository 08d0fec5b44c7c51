package node

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Backoff is a container's restart back-off, as a kubelet applies it: the first restart is
// immediate, each further one waits Initial, doubling up to Max, and a run that lasted ResetAfter
// starts the count again.
type Backoff struct {
	// Initial is the wait before the second restart in a row.
	Initial time.Duration
	// Max caps the wait.
	Max time.Duration
	// ResetAfter is how long a container must run for its next exit to count as the first.
	ResetAfter time.Duration
}

// DefaultBackoff is the kubelet's: 10 s doubling to 300 s, reset after 10 minutes up.
var DefaultBackoff = Backoff{Initial: 10 * time.Second, Max: 300 * time.Second, ResetAfter: 10 * time.Minute}

// Delay is the wait before a restart when the container has already been restarted streak times
// in a row without a run of ResetAfter: 0, Initial, 2*Initial, ... up to Max.
func (b Backoff) Delay(streak int) time.Duration {
	if streak <= 0 {
		return 0
	}
	d := b.Initial
	for i := 1; i < streak; i++ {
		if d >= b.Max/2 {
			return b.Max
		}
		d *= 2
	}
	return min(d, b.Max)
}

// Next is the restart after an exit: the streak before the exit and the run's start and finish
// give when to restart and the streak that restart makes.
func (b Backoff) Next(streak int, startedAt, finishedAt time.Time) (restartAt time.Time, next int) {
	if finishedAt.Sub(startedAt) >= b.ResetAfter {
		streak = 0
	}
	return finishedAt.Add(b.Delay(streak)), streak + 1
}

// ShouldRestart reports whether a container that exited with exitCode is started again under the
// Pod's restartPolicy.
func ShouldRestart(policy corev1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	default: // Always, and the API's default when unset
		return true
	}
}
