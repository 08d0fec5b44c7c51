package testsupport

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

// Deadline runs fn and crashes the process, with every goroutine's stack, if fn has not
// returned within d. In a fuzz target a hang thus becomes a crash that the fuzzer records with
// its input, instead of a run that silently stops executing.
func Deadline(d time.Duration, fn func()) {
	timer := time.AfterFunc(d, func() {
		buf := make([]byte, 4<<20)
		panic(fmt.Sprintf("still running after %s:\n%s", d, buf[:runtime.Stack(buf, true)]))
	})
	defer timer.Stop()
	fn()
}

// QuietKlog discards klog's output until tb ends: the code fuzz targets run logs as it serves,
// thousands of times a second.
func QuietKlog(tb testing.TB) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	tb.Cleanup(func() { klog.LogToStderr(true) })
}
