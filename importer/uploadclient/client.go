// Package uploadclient is the client side of the upload protocol (package uploadapi): it sends
// an image in chunks sized to the link's rate, each well under kube-apiserver's 60 s limit of a
// proxied request, and resumes from the position the importer confirms after a lost
// connection, a 5xx or a 409. vireoctl image-upload uses it through kube-apiserver; the import
// benchmark straight on the importer's socket.
package uploadclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/vireo-dev/vireo/importer/uploadapi"
)

// Reply is one answer of the upload protocol.
type Reply struct {
	Code   int
	Status uploadapi.Status
	// Parsed says the body was an uploadapi.Status; otherwise Message is the body's message (a
	// Kubernetes Status from a relay, for instance).
	Parsed  bool
	Message string
}

func (r Reply) String() string {
	msg := r.Message
	if r.Parsed && r.Status.Error != "" {
		msg = r.Status.Error
	}
	if msg == "" {
		return fmt.Sprintf("%d %s", r.Code, http.StatusText(r.Code))
	}
	return fmt.Sprintf("%d %s: %s", r.Code, http.StatusText(r.Code), msg)
}

// API is the upload protocol, as the transfer loop sees it. An error means no answer (the
// network's); any answer, whatever its status, is a Reply.
type API interface {
	// Position asks for the bytes received so far.
	Position(ctx context.Context) (Reply, error)
	// Send sends length bytes of body as the chunk at offset of an image of total bytes.
	Send(ctx context.Context, offset int64, body io.Reader, length, total int64, final bool) (Reply, error)
}

// HTTP speaks the upload protocol over HTTP to URL: a DataVolume's upload subresource through
// kube-apiserver (with the kubeconfig's client), or an importer's socket.
type HTTP struct {
	Client *http.Client
	// URL is where the protocol is served, without a query.
	URL string
}

// Position asks for the bytes received so far.
func (u *HTTP) Position(ctx context.Context) (Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Accept", "application/json")
	return u.do(req)
}

// Send sends length bytes of body as the chunk at offset of an image of total bytes.
func (u *HTTP) Send(ctx context.Context, offset int64, body io.Reader, length, total int64, final bool) (Reply, error) {
	q := url.Values{uploadapi.OffsetParam: {strconv.FormatInt(offset, 10)}}
	if final {
		q.Set(uploadapi.FinalParam, "true")
	}
	if length == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.URL+"?"+q.Encode(), body)
	if err != nil {
		return Reply{}, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(uploadapi.SizeHeader, strconv.FormatInt(total, 10))
	return u.do(req)
}

// do sends req and reads the answer.
func (u *HTTP) do(req *http.Request) (Reply, error) {
	resp, err := u.Client.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Reply{}, fmt.Errorf("reading the answer (%s): %w", resp.Status, err)
	}
	reply := Reply{Code: resp.StatusCode}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &reply.Status) == nil && !isKubernetesStatus(raw) {
		reply.Parsed = true
	} else {
		reply.Status, reply.Message = uploadapi.Status{}, serverMessage(raw)
	}
	return reply, nil
}

// isKubernetesStatus tells a relay's metav1.Status from the importer's answer.
func isKubernetesStatus(raw []byte) bool {
	var kind struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(raw, &kind) == nil && kind.Kind == "Status"
}

// serverMessage is the message of a Kubernetes Status in body, or body itself.
func serverMessage(body []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return string(bytes.TrimSpace(body))
}

// Options tune the transfer loop.
type Options struct {
	// ChunkSize is the most bytes sent in one PUT. Chunks start at FirstChunk (or ChunkSize
	// when smaller) and are then sized to take about ChunkTarget at the rate the last one
	// went, within [MinChunk, ChunkSize] and at most 4 times the last: kube-apiserver cuts a
	// proxied request at 60 s, so a slow link must send small chunks, and a fast one large
	// chunks, to pay the per-request cost seldom. Without ChunkTarget every chunk has
	// ChunkSize bytes.
	ChunkSize, FirstChunk, MinChunk int64
	ChunkTarget                     time.Duration
	// Retries bounds the failed attempts in a row (no answer, 5xx, 409) before giving up;
	// bytes accepted in between start the count again.
	Retries int
	// Backoff is the wait after the first failure, doubled after each further one up to
	// MaxBackoff.
	Backoff, MaxBackoff time.Duration
}

// DefaultOptions are vireoctl image-upload's.
func DefaultOptions() Options {
	return Options{ChunkSize: 32 << 20, FirstChunk: 1 << 20, MinChunk: 64 << 10, ChunkTarget: 10 * time.Second,
		Retries: 10, Backoff: time.Second, MaxBackoff: 10 * time.Second}
}

// NextChunk sizes the chunk after one of n bytes that took took.
func (o Options) NextChunk(n int64, took time.Duration) int64 {
	if o.ChunkTarget <= 0 {
		return o.ChunkSize
	}
	next := 4 * n
	if took > 0 {
		next = min(next, int64(float64(n)*o.ChunkTarget.Seconds()/took.Seconds()))
	}
	return max(min(next, o.ChunkSize), min(o.MinChunk, o.ChunkSize), 1)
}

// ErrFailed is in the error of an import that failed on the server's side.
var ErrFailed = errors.New("the import failed")

// Transfer uploads the size bytes of image through api: it asks for the position, sends
// chunks from there, the last one final, and resumes from the position the server reports
// after a lost connection, a 5xx or a 409. progress is told the position of the bytes sent.
// It returns once the server has accepted the final chunk.
func Transfer(ctx context.Context, api API, image io.ReaderAt, size int64, o Options, progress func(sent int64)) error {
	t := &transferState{ctx: ctx, o: o, best: -1}
	chunk := o.ChunkSize
	if o.FirstChunk > 0 {
		chunk = min(o.FirstChunk, chunk)
	}
	for {
		if !t.known {
			reply, err := api.Position(ctx)
			if err := t.answer("GET the position", reply, err); err != nil {
				return err
			}
			continue
		}
		pos := t.pos
		switch {
		case pos.Done && pos.Received == size:
			return nil
		case pos.Done:
			return fmt.Errorf("the upload is already complete with %d bytes, and the file has %d: was another image uploaded?", pos.Received, size)
		case pos.Received > size:
			return fmt.Errorf("the server has received %d bytes, more than the file's %d: was another image uploaded?", pos.Received, size)
		}
		n := min(chunk, size-pos.Received)
		final := pos.Received+n == size
		body := &countingReader{r: io.NewSectionReader(image, pos.Received, n), pos: pos.Received, progress: progress}
		sent := time.Now()
		reply, err := api.Send(ctx, pos.Received, body, n, size, final)
		if err == nil && reply.Code == http.StatusOK && n > 0 {
			chunk = o.NextChunk(n, time.Since(sent))
		}
		what := fmt.Sprintf("PUT of the %d bytes at offset %d", n, pos.Received)
		if err == nil && reply.Code == http.StatusOK && reply.Parsed && !reply.Status.Done && reply.Status.Received <= pos.Received {
			return fmt.Errorf("%s: the server answered 200 but stayed at %d bytes", what, reply.Status.Received)
		}
		if err := t.answer(what, reply, err); err != nil {
			return err
		}
	}
}

// transferState is the transfer loop's knowledge of the server's position and of the
// failures in a row.
type transferState struct {
	ctx      context.Context
	o        Options
	pos      uploadapi.Status
	known    bool  // pos is the server's current position
	best     int64 // the most bytes the server reported, to tell progress
	failures int
}

// answer takes in the answer to a request: a new position, a retry after a wait, or the
// error that ends the transfer.
func (t *transferState) answer(what string, reply Reply, err error) error {
	switch {
	case err != nil:
		if t.ctx.Err() != nil {
			return t.ctx.Err()
		}
		t.known = false
		return t.retry(what, err)
	case reply.Code == http.StatusOK && reply.Parsed:
		t.learn(reply.Status)
		return nil
	case reply.Code == http.StatusUnprocessableEntity && reply.Parsed && reply.Status.Error != "":
		return fmt.Errorf("%w: %s", ErrFailed, reply.Status.Error)
	case reply.Code == http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %s", ErrFailed, reply)
	case reply.Code == http.StatusConflict && reply.Parsed:
		// Resume from the server's position; a wait only when it did not move.
		if t.learn(reply.Status) {
			return nil
		}
		return t.retry(what, errors.New(reply.String()))
	case reply.Code == http.StatusConflict || reply.Code == http.StatusRequestTimeout || reply.Code == http.StatusTooManyRequests || reply.Code >= 500:
		t.known = false
		return t.retry(what, errors.New(reply.String()))
	}
	return fmt.Errorf("%s: the server answered %s", what, reply)
}

// learn records the server's position and reports whether it is further than ever before,
// which clears the failures.
func (t *transferState) learn(st uploadapi.Status) bool {
	t.pos, t.known = st, true
	if st.Received <= t.best {
		return false
	}
	t.best, t.failures = st.Received, 0
	return true
}

// retry counts a failure and waits before the next attempt, or gives up after too many.
func (t *transferState) retry(what string, cause error) error {
	t.failures++
	if t.failures > t.o.Retries {
		return fmt.Errorf("%s: %w (%d failed attempts in a row)", what, cause, t.failures)
	}
	wait := t.o.Backoff
	for i := 1; i < t.failures && wait < t.o.MaxBackoff; i++ {
		wait *= 2
	}
	timer := time.NewTimer(min(wait, t.o.MaxBackoff))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.ctx.Done():
		return t.ctx.Err()
	}
}

// countingReader reports the position of the bytes read from a chunk.
type countingReader struct {
	r        io.Reader
	pos      int64
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.pos += int64(n)
	if n > 0 && c.progress != nil {
		c.progress(c.pos)
	}
	return n, err
}
