package imageregistry

import (
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// logRequests logs what a reader of the log wants from a registry: each pull and push (GET
// and the writes), and every failure but the blob existence checks that precede a push (HEAD
// answered 404). Version checks (/v2/) and HEADs that succeed are not logged.
func logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if !worthLogging(r.Method, r.URL.Path, rec.status) {
			return
		}
		klog.InfoS("registry request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"bytes", rec.bytes, "duration", time.Since(start).Round(time.Millisecond), "client", r.RemoteAddr)
	})
}

// worthLogging decides whether a request gets a log line.
func worthLogging(method, path string, status int) bool {
	if strings.TrimSuffix(path, "/") == "/v2" && status < 400 {
		return false
	}
	if method == http.MethodHead {
		return status >= 400 && status != http.StatusNotFound
	}
	return true
}

// statusRecorder remembers the status and counts the body bytes of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the ResponseWriter's own ReadFrom (sendfile for blobs served from files),
// which io.Copy would otherwise not find behind the recorder.
func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(s.ResponseWriter, r)
	}
	s.bytes += n
	return n, err
}
