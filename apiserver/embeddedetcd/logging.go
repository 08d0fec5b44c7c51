package embeddedetcd

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// closedServingErrors are the texts of errors etcd's serving goroutines return because
// their listener or server was closed, for those whose types live in modules Vireo does
// not import (cmux's and gRPC's).
var closedServingErrors = []string{
	"mux: server closed",
	"mux: listener closed",
	"grpc: the server has been stopped",
}

// isClosedServing reports whether err only says a listener or server was closed.
func isClosedServing(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return true
	}
	return slices.ContainsFunc(closedServingErrors, func(s string) bool { return strings.Contains(err.Error(), s) })
}

// klogCore writes etcd's zap entries to klog, so the embedded etcd logs where and how the
// rest of vireo-apiserver does. Errors and worse are klog errors; warnings appear at -v=1
// and everything else at -v=4. While the member is closing, the errors etcd's serving
// goroutines report because Close closed their listeners (it logs each one as "setting
// up serving from embedded etcd failed") are expected and logged as information; any
// other error, and those same errors outside a close, stay errors.
type klogCore struct {
	closing *atomic.Bool
	fields  []zapcore.Field
}

// callerDepth makes klog name etcd's line that logged, not this adapter: Write is called
// by zap's CheckedEntry.Write, called by the zap.Logger method etcd called.
const callerDepth = 3

// newLogger returns etcd's logger and the flag Close sets before it starts closing.
func newLogger() (*zap.Logger, *atomic.Bool) {
	closing := &atomic.Bool{}
	return zap.New(&klogCore{closing: closing}), closing
}

// Enabled follows klog's verbosity.
func (c *klogCore) Enabled(l zapcore.Level) bool {
	switch {
	case l >= zapcore.ErrorLevel:
		return true
	case l == zapcore.WarnLevel:
		return klog.V(1).Enabled()
	default:
		return klog.V(4).Enabled()
	}
}

// With returns a core that adds fields to every entry.
func (c *klogCore) With(fields []zapcore.Field) zapcore.Core {
	return &klogCore{closing: c.closing, fields: append(slices.Clip(c.fields), fields...)}
}

// Check adds this core to entries of an enabled level.
func (c *klogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write logs one entry through klog.
func (c *klogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	var err error
	for _, f := range append(slices.Clip(c.fields), fields...) {
		if f.Type == zapcore.ErrorType && f.Key == "error" {
			err, _ = f.Interface.(error)
			continue
		}
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kv := []any{"component", "etcd"}
	for _, k := range keys {
		kv = append(kv, k, enc.Fields[k])
	}
	msg := e.Message
	switch {
	case e.Level >= zapcore.ErrorLevel && c.closing.Load() && isClosedServing(err):
		klog.InfoSDepth(callerDepth, msg, append(kv, "reason", fmt.Sprint(err), "expected", "embedded etcd is closing")...)
		return nil
	case e.Level >= zapcore.ErrorLevel:
		klog.ErrorSDepth(callerDepth, err, msg, kv...)
		return nil
	}
	if err != nil {
		kv = append(kv, "err", err.Error())
	}
	if e.Level == zapcore.WarnLevel {
		klog.V(1).InfoSDepth(callerDepth, msg, kv...)
	} else {
		klog.V(4).InfoSDepth(callerDepth, msg, kv...)
	}
	return nil
}

// Sync flushes klog.
func (c *klogCore) Sync() error {
	klog.Flush()
	return nil
}
