package container

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/test/logcapture"
)

func ptr[T any](v T) *T { return &v }

func TestReadLogOptions(t *testing.T) {
	// 40000 x's make three lines (P, P, F); "end" without a newline is a P line at EOF.
	dir, _ := run(t, sh(`echo a; echo b; echo c; head -c 40000 /dev/zero | tr '\0' x; echo; printf end`))
	waitExit(t, dir)
	long := strings.Repeat("x", 40000)
	for _, tc := range []struct {
		name string
		opts LogOptions
		want string
	}{
		{"all", LogOptions{}, "a\nb\nc\n" + long + "\nend"},
		{"tail 2", LogOptions{Tail: ptr[int64](2)}, long + "\nend"},
		{"tail 0", LogOptions{Tail: ptr[int64](0)}, ""},
		{"tail 100", LogOptions{Tail: ptr[int64](100)}, "a\nb\nc\n" + long + "\nend"},
		{"limit", LogOptions{LimitBytes: ptr[int64](3)}, "a\nb"},
		{"since the future", LogOptions{SinceTime: ptr(time.Now().Add(time.Hour))}, ""},
		{"since the past", LogOptions{SinceTime: ptr(time.Now().Add(-time.Hour)), Tail: ptr[int64](1)}, "end"},
	} {
		if got := logOf(t, dir, tc.opts); got != tc.want {
			t.Errorf("%s: ReadLog = %.60q (%d bytes), want %.60q (%d bytes)", tc.name, got, len(got), tc.want, len(tc.want))
		}
	}
	got := logOf(t, dir, LogOptions{Tail: ptr[int64](3), Timestamps: true})
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z `
	if !regexp.MustCompile(`^`+ts+"c\n"+ts+"x+\n"+ts+"end$").MatchString(got) || !strings.Contains(got, " "+long+"\n") {
		t.Errorf("ReadLog with timestamps = %.200q", got)
	}
}

func TestReadLogFollowEndsWithTheContainer(t *testing.T) {
	dir, _ := run(t, sh(`trap 'echo bye; exit 0' TERM; echo one; sleep 1000 & wait`))
	var cfg initConfig
	if _, err := readJSON(dir+"/"+specFile, &cfg); err != nil {
		t.Fatal(err)
	}
	var out logcapture.Buffer
	done := func() bool { s, err := Inspect(dir); return err == nil && s.Exit != nil }
	returned := make(chan error, 1)
	go func() {
		returned <- ReadLog(context.Background(), cfg.Spec.LogFile, LogOptions{Follow: true}, &out, done)
	}()
	poll(t, "the first line through ReadLog", func() bool { return out.String() == "one\n" })
	if err := Signal(dir, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("ReadLog: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("ReadLog with Follow did not return after the container exited")
	}
	if got := out.String(); got != "one\nbye\n" {
		t.Errorf("followed log = %q, want one, bye", got)
	}
	if e := waitExit(t, dir); e.Code != 0 || e.Reason != "Completed" {
		t.Errorf("exit = %+v, want Completed", e)
	}
}

func TestReadLogFollowStopsWithContext(t *testing.T) {
	dir, _ := run(t, Spec{Path: "/bin/sleep", Args: []string{"1000"}})
	var cfg initConfig
	if _, err := readJSON(dir+"/"+specFile, &cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() {
		returned <- ReadLog(ctx, cfg.Spec.LogFile, LogOptions{Follow: true}, &logcapture.Buffer{}, func() bool { return false })
	}()
	cancel()
	select {
	case err := <-returned:
		if err != context.Canceled {
			t.Errorf("ReadLog = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadLog did not return when its context ended")
	}
}
