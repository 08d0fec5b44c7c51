package embeddedetcd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// syncBuffer is a bytes.Buffer safe for klog's concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureKlog sends klog's output to a buffer for the rest of the test.
func captureKlog(t *testing.T) *syncBuffer {
	t.Helper()
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	if err := fs.Set("logtostderr", "false"); err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{}
	klog.SetOutputBySeverity("INFO", buf) // the INFO log has every severity, once
	t.Cleanup(func() {
		klog.Flush()
		_ = fs.Set("logtostderr", "true")
	})
	return buf
}

// errorLines are the klog lines of severity error or fatal ("E1130 16:20:00.000000 ...").
func errorLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if len(l) > 1 && (l[0] == 'E' || l[0] == 'F') && l[1] >= '0' && l[1] <= '9' {
			out = append(out, l)
		}
	}
	return out
}

func TestClosedListenerErrorsAreExpectedOnlyWhileClosing(t *testing.T) {
	buf := captureKlog(t)
	logger, closing := newLogger()
	const msg = "setting up serving from embedded etcd failed."
	closed := fmt.Errorf("accept unix /tmp/x/etcd-client.sock: %w", net.ErrClosed)

	logger.Error(msg, zap.Error(closed))
	klog.Flush()
	if n := len(errorLines(buf.String())); n != 1 {
		t.Fatalf("a closed listener outside Close: %d error lines, want 1:\n%s", n, buf)
	}

	closing.Store(true)
	for _, err := range []error{closed, errors.New("mux: server closed"), http.ErrServerClosed} {
		logger.Error(msg, zap.Error(err))
	}
	klog.Flush()
	if n := len(errorLines(buf.String())); n != 1 {
		t.Fatalf("closed listeners while closing: %d error lines in total, want still 1:\n%s", n, buf)
	}
	logger.Error("failed to save snapshot", zap.Error(errors.New("disk full")))
	logger.Error(msg, zap.Error(errors.New("tls: bad certificate")))
	klog.Flush()
	errs := errorLines(buf.String())
	if len(errs) != 3 || !strings.Contains(errs[1], "disk full") || !strings.Contains(errs[2], "bad certificate") {
		t.Fatalf("real errors while closing must stay errors, got:\n%s", strings.Join(errs, "\n"))
	}
	if !strings.Contains(errs[1], `component="etcd"`) {
		t.Errorf("etcd's lines are not marked as etcd's: %s", errs[1])
	}
}

// TestCleanStopLogsNoErrors starts and stops the embedded etcd, with a client and a
// watch open until just before the stop, as vireo-apiserver leaves it.
func TestCleanStopLogsNoErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	buf := captureKlog(t)
	ctx := context.Background()
	s, err := Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	watch := cli.Watch(wctx, "/k")
	if _, err := cli.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watch:
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	cancel()
	cli.Close()
	s.Close()
	klog.Flush()
	if errs := errorLines(buf.String()); len(errs) > 0 {
		t.Errorf("error lines on a clean stop:\n%s", strings.Join(errs, "\n"))
	}
}
