package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestWithLogMessage(t *testing.T) {
	w := &podWorker{dir: t.TempDir()}
	log := w.logPath("importer", 2)
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "2026-12-01T05:00:00.%09dZ stderr F line %d of the importer's log\n", i, i)
	}
	if err := os.WriteFile(log, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	fallback := &corev1.Container{Name: "importer", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
	file := &corev1.Container{Name: "importer", TerminationMessagePolicy: corev1.TerminationMessageReadFile}

	got := w.withLogMessage(fallback, 2, &Exit{ExitCode: 2})
	if !strings.HasSuffix(got.Message, "line 99 of the importer's log") || len(got.Message) > fallbackLogBytes {
		t.Errorf("message (%d bytes) %q: want the log's tail, at most %d bytes", len(got.Message), got.Message, fallbackLogBytes)
	}
	if strings.Contains(got.Message, "line 19 of") {
		t.Errorf("message holds more than the last %d lines: %q", fallbackLogLines, got.Message)
	}
	for name, c := range map[string]struct {
		c    *corev1.Container
		exit *Exit
	}{
		"policy File":          {file, &Exit{ExitCode: 2}},
		"success":              {fallback, &Exit{ExitCode: 0}},
		"a message of its own": {fallback, &Exit{ExitCode: 137, Message: "OOM"}},
	} {
		if got := w.withLogMessage(c.c, 2, c.exit); got.Message != c.exit.Message {
			t.Errorf("%s: message %q, want %q", name, got.Message, c.exit.Message)
		}
	}
	if got := w.withLogMessage(fallback, 7, &Exit{ExitCode: 1}); got.Message != "" {
		t.Errorf("a run without a log: message %q", got.Message)
	}
}
