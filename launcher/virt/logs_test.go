package virt

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sampleQEMULog is the start of a domain log as libvirt 9.0 writes it with
// stdio_handler = "file": an earlier run's lines, then the latest command line.
const sampleQEMULog = `2026-11-30 20:40:00.000+0000: starting up libvirt version: 9.0.0, qemu version: 7.2.22
LC_ALL=C \
/usr/bin/qemu-system-x86_64 \
-name guest=vm,debug-threads=on \
-msg timestamp=on
2026-11-30T20:41:00.000000Z qemu-system-x86_64: old run's message
2026-11-30 20:41:00.100+0000: shutting down, reason=destroyed
2026-11-30 20:52:30.266+0000: starting up libvirt version: 9.0.0, qemu version: 7.2.22
LC_ALL=C \
HOME=/d/home \
/usr/bin/qemu-system-x86_64 \
-name guest=vm,debug-threads=on \
-msg timestamp=on
`

func TestQEMULogTail(t *testing.T) {
	if got := qemuLogTail(sampleQEMULog, 3); len(got) != 0 {
		t.Errorf("tail of a log with only a command line = %q", got)
	}
	more := sampleQEMULog + "a\n\nb\nc\nd\n2026-11-30 20:52:40.700+0000: shutting down, reason=crashed\n"
	if got := strings.Join(qemuLogTail(more, 3), ","); got != "b,c,d" {
		t.Errorf("tail = %q, want b,c,d", got)
	}
	if got := strings.Join(qemuLogTail("x\ny\n", 5), ","); got != "x,y" {
		t.Errorf("tail without a start line = %q", got)
	}
	if got := qemuLogTail("", 3); len(got) != 0 {
		t.Errorf("tail of nothing = %q", got)
	}
	// A start line at the very end (the command line not yet written) must not panic.
	qemuLogTail("2026 x: starting up libvirt version: 9\n", 3)
	qemuLogTail("2026 x: starting up libvirt version: 9\nA \\\n", 3)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogTailerForwardsNewCompleteLines(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.log")
	if err := os.WriteFile(old, []byte("before the daemon started\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	tl := startLogTailer(dir, &logSink{w: &out}, 5*time.Millisecond)
	appendFile(t, old, "after\npartial")
	appendFile(t, filepath.Join(dir, "vm.log"), "hello\n")
	waitFor(t, func() bool {
		s := out.String()
		return strings.Contains(s, "qemu[old]: after\n") && strings.Contains(s, "qemu[vm]: hello\n")
	})
	appendFile(t, old, " line\n")
	tl.close()
	tl.close() // idempotent
	s := out.String()
	if strings.Contains(s, "before the daemon started") || !strings.Contains(s, "qemu[old]: partial line\n") {
		t.Errorf("forwarded:\n%s", s)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatal("condition not met within 10 s")
		case <-tick.C:
		}
	}
}

func TestCopyLinesKeepsLastLines(t *testing.T) {
	var out syncBuffer
	keep := &ring{max: 2}
	copyLines(strings.NewReader("a\nb\nc\n"), &logSink{w: &out}, "p: ", keep)
	if out.String() != "p: a\np: b\np: c\n" || strings.Join(keep.last(), ",") != "b,c" {
		t.Errorf("out %q, kept %q", out.String(), keep.last())
	}
	// A nil writer discards.
	copyLines(strings.NewReader("x\n"), &logSink{}, "p: ", &ring{max: 1})
}

func TestProcessGone(t *testing.T) {
	if processGone(os.Getpid()) {
		t.Error("this process reported gone")
	}
	if !processGone(1 << 30) {
		t.Error("a pid that cannot exist reported running")
	}
}
