package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/importer/uploadapi"
)

// DefaultUploadFailureGrace is how long the importer keeps answering after a failed import
// when nobody has asked for the failure yet. (The upload protocol, package uploadapi, is
// served by the importer of a DataVolume with an upload source on a unix socket; the client's
// requests reach it relayed from the DataVolume's upload subresource.)
const DefaultUploadFailureGrace = 30 * time.Second

// uploadBuffer is the most the importer holds of a chunk: the rest waits in the connection
// until the import has taken the part before (back-pressure).
const uploadBuffer = 64 << 10

// uploadStallTimeout bounds the wait for the next bytes of a chunk's body: a writer whose
// client went away unnoticed (the relays kept the connection) stops blocking the next one.
const uploadStallTimeout = 2 * time.Minute

// uploadDrainLimit and uploadDrainTimeout bound the unread body discarded before an early
// answer (a refusal, or the import's failure), so that the client receives the answer instead
// of a reset connection.
const (
	uploadDrainLimit   = 64 << 20
	uploadDrainTimeout = 10 * time.Second
)

// errPipelineClosed: the import stopped reading the uploaded bytes (it failed or was stopped).
var errPipelineClosed = errors.New("the import stopped reading the upload")

// UploadSource is an image sent by a client through the upload protocol, which the source
// serves as an http.Handler (see ImportUpload for the unix socket). Its bytes stream straight
// into the import: a chunk's body is read only as fast as the import takes it. Make it with
// NewUploadSource.
type UploadSource struct {
	// Socket is the unix socket ImportUpload serves the protocol on.
	Socket string
	// FailureGrace is how long ImportUpload waits, after a failed import, for a request to
	// answer with the failure; 0 means DefaultUploadFailureGrace.
	FailureGrace time.Duration
	// Progress, if set, is called with the bytes received so far and the total the client
	// announced in uploadapi.SizeHeader (-1 before it did), as they are received.
	Progress func(received, total int64)

	pr *io.PipeReader
	pw *io.PipeWriter

	mu       sync.Mutex
	received int64
	total    int64 // -1 until announced
	done     bool  // the final chunk was accepted
	writing  bool  // a PUT is copying its body
	opened   bool
	result   error       // the import's failure, once ended
	unwatch  func() bool // stops ending the stream with Open's context

	started      chan struct{} // closed by the first accepted PUT
	startOnce    sync.Once
	ended        chan struct{} // closed by finish
	answered     chan struct{} // closed once a request was answered with the failure
	answeredOnce sync.Once
}

// NewUploadSource returns a source that serves the upload protocol on the unix socket at
// socket (through ImportUpload).
func NewUploadSource(socket string) *UploadSource {
	pr, pw := io.Pipe()
	return &UploadSource{
		Socket: socket, pr: pr, pw: pw, total: -1,
		started: make(chan struct{}), ended: make(chan struct{}), answered: make(chan struct{}),
	}
}

func (s *UploadSource) String() string { return "upload on " + s.Socket }

// Validate checks that the source was made by NewUploadSource and has a socket.
func (s *UploadSource) Validate() error {
	if s.pr == nil {
		return permanentf("the upload source was not made by NewUploadSource")
	}
	if s.Socket == "" {
		return permanentf("the upload source has no socket path")
	}
	return nil
}

// Open waits for the first chunk and returns the stream of uploaded bytes, which ends after
// the final chunk. size is the total the first chunk announced, or -1.
func (s *UploadSource) Open(ctx context.Context) (io.ReadCloser, int64, error) {
	s.mu.Lock()
	if s.opened {
		s.mu.Unlock()
		return nil, 0, permanentf("the upload can be read only once")
	}
	s.opened = true
	// A stopped import stops waiting for the next chunk.
	s.unwatch = context.AfterFunc(ctx, func() { s.pw.CloseWithError(ctx.Err()) })
	s.mu.Unlock()
	select {
	case <-s.started:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	s.mu.Lock()
	total := s.total
	s.mu.Unlock()
	return uploadReader{s.pr}, total, nil
}

// uploadReader is the import's end of the stream; closing it refuses further chunks.
type uploadReader struct{ *io.PipeReader }

func (r uploadReader) Close() error { return r.CloseWithError(errPipelineClosed) }

// finish records the import's outcome: after a failure (err non-nil) every request answers 422
// with its message. It ends the stream, so that a chunk being written stops.
func (s *UploadSource) finish(err error) {
	s.mu.Lock()
	s.result = err
	if s.unwatch != nil {
		s.unwatch()
	}
	s.mu.Unlock()
	if err == nil {
		err = errPipelineClosed
	}
	s.pr.CloseWithError(err)
	close(s.ended)
}

// status returns the protocol's view of the state; the caller holds s.mu.
func (s *UploadSource) status() uploadapi.Status {
	st := uploadapi.Status{Received: s.received, Done: s.done}
	if s.result != nil {
		st.Error = s.result.Error()
	}
	return st
}

// ServeHTTP serves the upload protocol at uploadapi.Path.
func (s *UploadSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != uploadapi.Path {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.mu.Lock()
		st := s.status()
		s.mu.Unlock()
		code := http.StatusOK
		if st.Error != "" {
			code = http.StatusUnprocessableEntity
		}
		s.reply(w, code, st)
	case http.MethodPut:
		s.put(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT")
		s.replyError(w, r, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed at %s: GET the position or PUT a chunk", r.Method, uploadapi.Path))
	}
}

// chunk is a PUT's parameters.
type chunk struct {
	offset int64
	final  bool
	total  int64 // -1 when not announced
	length int64 // the body's Content-Length, -1 when unknown (chunked)
}

// parseChunk reads a PUT's offset, final and uploadapi.SizeHeader.
func parseChunk(r *http.Request) (chunk, error) {
	c := chunk{total: -1, length: r.ContentLength}
	q := r.URL.Query()
	off := q.Get(uploadapi.OffsetParam)
	if off == "" {
		return c, fmt.Errorf("a PUT needs the query parameter offset, the position of the chunk (GET %s tells the bytes received)", uploadapi.Path)
	}
	var err error
	if c.offset, err = strconv.ParseInt(off, 10, 64); err != nil || c.offset < 0 {
		return c, fmt.Errorf("offset %q is not a byte position", off)
	}
	if f := q.Get(uploadapi.FinalParam); f != "" {
		if c.final, err = strconv.ParseBool(f); err != nil {
			return c, fmt.Errorf("final %q is neither true nor false", f)
		}
	}
	if h := r.Header.Get(uploadapi.SizeHeader); h != "" {
		if c.total, err = strconv.ParseInt(h, 10, 64); err != nil || c.total < 0 {
			return c, fmt.Errorf("%s %q is not a size in bytes", uploadapi.SizeHeader, h)
		}
	}
	return c, nil
}

// errPastSize: a chunk's body went on past the size the upload announced.
var errPastSize = errors.New("the chunk goes on past the image's size")

// pastSize is the message of a chunk of length bytes (-1: unknown) at offset that ends past
// the announced total.
func pastSize(length, offset, total int64) string {
	what := "the chunk"
	if length >= 0 {
		what = fmt.Sprintf("the chunk of %d bytes", length)
	}
	return fmt.Sprintf("%s at offset %d ends past the image's %s of %d bytes", what, offset, uploadapi.SizeHeader, total)
}

// put appends a chunk.
func (s *UploadSource) put(w http.ResponseWriter, r *http.Request) {
	c, err := parseChunk(r)
	if err != nil {
		s.replyError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if code, st, ok := s.startChunk(c); !ok {
		drain(w, r)
		s.reply(w, code, st)
		return
	}
	s.startOnce.Do(func() { close(s.started) })
	copied, err := s.copyChunk(w, r.Body, c.offset)
	if errors.Is(err, errPipelineClosed) {
		s.mu.Lock()
		s.writing = false
		s.mu.Unlock()
		s.replyFailure(w, r)
		return
	}
	code, st := s.endChunk(c, copied, err)
	if errors.Is(err, errPastSize) {
		drain(w, r)
	}
	s.reply(w, code, st)
}

// endChunk records the end of a chunk's copy and returns the answer: 400 for a body that went
// on past the announced size (the bytes up to it are kept), 409 for a body that ended early
// or a final chunk short of the announced size (the client resumes), else 200.
func (s *UploadSource) endChunk(c chunk, copied int64, err error) (int, uploadapi.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing = false
	switch {
	case errors.Is(err, errPastSize):
		klog.InfoS("An upload chunk went on past the announced size", "offset", c.offset, "copied", copied, "total", s.total)
		st := s.status()
		st.Error = pastSize(c.length, c.offset, s.total)
		return http.StatusBadRequest, st
	case err != nil:
		klog.InfoS("An upload chunk ended early", "offset", c.offset, "copied", copied, "received", s.received, "err", err)
		return http.StatusConflict, s.status()
	case c.final && s.total >= 0 && s.received != s.total:
		klog.InfoS("The final upload chunk does not end at the announced size", "received", s.received, "total", s.total)
		return http.StatusConflict, s.status()
	case c.final:
		s.done = true
		_ = s.pw.Close()
		klog.InfoS("Upload complete", "received", s.received)
	}
	return http.StatusOK, s.status()
}

// startChunk accepts a chunk for writing, or says how to refuse it.
func (s *UploadSource) startChunk(c chunk) (int, uploadapi.Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status()
	switch {
	case s.result != nil:
		return http.StatusUnprocessableEntity, st, false
	case s.done || s.writing || c.offset != s.received:
		klog.InfoS("Upload chunk refused", "offset", c.offset, "received", s.received, "done", s.done, "writing", s.writing)
		return http.StatusConflict, st, false
	case c.total >= 0 && s.total >= 0 && c.total != s.total:
		st.Error = fmt.Sprintf("%s %d differs from the %d announced before", uploadapi.SizeHeader, c.total, s.total)
		return http.StatusBadRequest, st, false
	}
	total := s.total
	if total < 0 {
		total = c.total
	}
	// The size may have been announced by this chunk or an earlier one.
	if total >= 0 && c.length > total-c.offset {
		st.Error = pastSize(c.length, c.offset, total)
		return http.StatusBadRequest, st, false
	}
	s.total = total
	if s.received == 0 {
		klog.InfoS("Upload started", "total", s.total)
	}
	s.writing = true
	return 0, st, true
}

// copyChunk copies body, the chunk at offset, into the import, a buffer at a time, counting
// what the import took. It returns errPipelineClosed when the import stopped reading,
// errPastSize when the body goes on past the announced size (one without a Content-Length:
// startChunk refused a longer Content-Length), or the body's own error.
func (s *UploadSource) copyChunk(w http.ResponseWriter, body io.Reader, offset int64) (int64, error) {
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, uploadBuffer)
	s.mu.Lock()
	room := s.total - offset // the bytes before the announced size, when one was announced
	s.mu.Unlock()
	var copied int64
	for {
		_ = rc.SetReadDeadline(time.Now().Add(uploadStallTimeout))
		n, rerr := body.Read(buf)
		if room >= 0 && int64(n) > room-copied {
			n, rerr = int(room-copied), errPastSize
		}
		if n > 0 {
			written, werr := s.pw.Write(buf[:n])
			copied += int64(written)
			s.mu.Lock()
			s.received += int64(written)
			received, total := s.received, s.total
			s.mu.Unlock()
			if s.Progress != nil {
				s.Progress(received, total)
			}
			if werr != nil {
				return copied, errPipelineClosed
			}
		}
		switch {
		case rerr == io.EOF:
			return copied, nil
		case rerr != nil:
			return copied, rerr
		}
	}
}

// replyFailure answers a chunk the import stopped reading with the import's failure, once it
// is known.
func (s *UploadSource) replyFailure(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.ended:
	case <-r.Context().Done():
		return
	}
	drain(w, r)
	s.mu.Lock()
	st := s.status()
	s.mu.Unlock()
	if st.Error == "" {
		// Stopped without a failure: the import was stopped from outside.
		st.Error = "the import was stopped"
	}
	s.reply(w, http.StatusUnprocessableEntity, st)
}

// replyError answers code with message in the status's Error.
func (s *UploadSource) replyError(w http.ResponseWriter, r *http.Request, code int, message string) {
	drain(w, r)
	s.mu.Lock()
	st := s.status()
	s.mu.Unlock()
	st.Error = message
	s.reply(w, code, st)
}

// reply writes st as JSON with code; a 422 counts as the failure's answer.
func (s *UploadSource) reply(w http.ResponseWriter, code int, st uploadapi.Status) {
	body, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(code)
	_, err := w.Write(append(body, '\n'))
	if code == http.StatusUnprocessableEntity && err == nil {
		_ = http.NewResponseController(w).Flush()
		s.answeredOnce.Do(func() { close(s.answered) })
	}
}

// drain discards what is left of a request's body, within bounds of size and time, before an
// early answer. A client that waits for "100 Continue" has sent no body: it gets the answer
// instead.
func drain(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(uploadDrainTimeout))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, uploadDrainLimit))
	_ = rc.SetReadDeadline(time.Time{})
}
