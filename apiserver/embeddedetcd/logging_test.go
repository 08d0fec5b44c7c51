package embeddedetcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/test/logcapture"
)

func TestClosedListenerErrorsAreExpectedOnlyWhileClosing(t *testing.T) {
	buf := logcapture.Klog(t)
	logger, closing := newLogger()
	const msg = "setting up serving from embedded etcd failed."
	closed := fmt.Errorf("accept unix /tmp/x/etcd-client.sock: %w", net.ErrClosed)

	logger.Error(msg, zap.Error(closed))
	klog.Flush()
	if n := len(buf.ErrorLines()); n != 1 {
		t.Fatalf("a closed listener outside Close: %d error lines, want 1:\n%s", n, buf)
	}

	closing.Store(true)
	for _, err := range []error{closed, errors.New("mux: server closed"), http.ErrServerClosed} {
		logger.Error(msg, zap.Error(err))
	}
	klog.Flush()
	if n := len(buf.ErrorLines()); n != 1 {
		t.Fatalf("closed listeners while closing: %d error lines in total, want still 1:\n%s", n, buf)
	}
	logger.Error("failed to save snapshot", zap.Error(errors.New("disk full")))
	logger.Error(msg, zap.Error(errors.New("tls: bad certificate")))
	klog.Flush()
	errs := buf.ErrorLines()
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
	buf := logcapture.Klog(t)
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
	if errs := buf.ErrorLines(); len(errs) > 0 {
		t.Errorf("error lines on a clean stop:\n%s", strings.Join(errs, "\n"))
	}
}
