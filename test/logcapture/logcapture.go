// Package logcapture lets tests read what klog logged, to prove that a component logs no errors
// where it must not (a clean shutdown, for one).
package logcapture

import (
	"bytes"
	"flag"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// Buffer holds klog's output; it is safe for klog's concurrent writers.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends klog output.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far; call klog.Flush first.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ErrorLines are the logged lines of severity error or fatal ("E1130 16:20:00.000000 ...").
func (b *Buffer) ErrorLines() []string {
	klog.Flush()
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) > 1 && (l[0] == 'E' || l[0] == 'F') && l[1] >= '0' && l[1] <= '9' {
			out = append(out, l)
		}
	}
	return out
}

// Klog sends klog's output (every severity, once) to a buffer for the rest of the test, and back
// to standard error when the test ends.
func Klog(t *testing.T) *Buffer {
	t.Helper()
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	if err := fs.Set("logtostderr", "false"); err != nil {
		t.Fatal(err)
	}
	buf := &Buffer{}
	klog.SetOutputBySeverity("INFO", buf) // the INFO log has every severity, once
	t.Cleanup(func() {
		klog.Flush()
		_ = fs.Set("logtostderr", "true")
	})
	return buf
}
