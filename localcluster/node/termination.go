package node

import (
	"bytes"
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

// A kubelet's limits on a termination message taken from the log: the last 80 lines, at most
// 2048 bytes of them.
const (
	fallbackLogLines = 80
	fallbackLogBytes = 2048
)

// withLogMessage gives a failed run's exit the tail of its log as its message, as a kubelet
// does for terminationMessagePolicy FallbackToLogsOnError (the message file, which vireo-local
// does not mount, is always empty here). Other exits are returned as they are.
func (w *podWorker) withLogMessage(c *corev1.Container, attempt int, exit *Exit) *Exit {
	if exit == nil || exit.ExitCode == 0 || exit.Message != "" || c == nil ||
		c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		return exit
	}
	tail := int64(fallbackLogLines)
	var buf bytes.Buffer
	if err := container.ReadLog(context.Background(), w.logPath(c.Name, attempt), container.LogOptions{Tail: &tail}, &buf, nil); err != nil {
		return exit
	}
	msg := buf.Bytes()
	if len(msg) > fallbackLogBytes {
		msg = msg[len(msg)-fallbackLogBytes:]
	}
	out := *exit
	out.Message = strings.TrimRight(string(msg), "\n")
	return &out
}
