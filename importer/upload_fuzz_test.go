package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// FuzzUploadProtocol plays arbitrary sequences of requests to the importer's upload server, as
// the uploading user sends them (the node agent and vireo-apiserver relay them unchanged but
// for the query and headers they drop): any method and path, any offset, final and
// X-Upload-Size text, bodies with a Content-Length, chunked or cut short, and the import
// failing in between. The import reads what the server accepts, as ImportUpload's does.
// Every answer must keep the protocol (package uploadapi) and the import must read exactly the
// accepted bytes:
//   - every answer is 200, 400, 404 (another path), 405, 409 or 422, and all but 404 carry
//     an uploadapi.Status whose Received never moves back; a 400 or 405 says why in Error;
//   - Received moves forward only on a PUT at offset Received, by at most its body, and by all
//     of it on a 200; the import reads exactly the accepted bytes, in order;
//   - Received never passes the X-Upload-Size the upload announced;
//   - Done is set only by a 200 to a final PUT, and stays; after it no PUT is accepted, and
//     the import's stream has ended;
//   - before the import failed no request is answered 422; after it every well-formed request
//     is, with the failure as Error.
func FuzzUploadProtocol(f *testing.F) {
	testsupport.QuietKlog(f)
	for _, seed := range []string{
		// One chunk, final, with the size: the simplest upload.
		"\x00offset=0&final=true\n5\n\x05hello",
		// Two chunks resumed after a GET, the second at "@" (the Received of the last answer).
		"\x00offset=0\n10\n\x05hello\x03\n\n\x00\x00offset=@&final=true\n10\n\x05world",
		// A wrong offset, a bad final, a bad size, a negative offset, then a good chunk.
		"\x00offset=7\n\n\x01x\x00offset=0&final=maybe\n\n\x01x\x00offset=0\nlots\n\x01x\x00offset=-1\n\n\x00\x00offset=0&final=1\n\n\x02ok",
		// A chunked body past the announced size.
		"\x08offset=0\n4\n\x0aabcdefghij\x00offset=@&final=true\n4\n\x00",
		// A size announced once, then a chunk without it that goes past it.
		"\x00offset=0\n4\n\x02ab\x00offset=@&final=true\n\n\x05cdefg",
		// A body cut short, resumed; a chunk after the end; a POST, another path, HEAD.
		"\x10offset=0\n6\n\x03abc\x00offset=@&final=true\n6\n\x03def\x00offset=@\n\n\x01x\x05offset=0\n\n\x00\x06\n\n\x00\x04\n\n\x00",
		// The import fails mid-upload: every later request is told.
		"\x00offset=0\n\n\x03abc\x07\n\n\x00\x00offset=@\n\n\x01d\x03\n\n\x00\x00bad\n\n\x00",
		// A large chunk (its body repeated) with Expect: 100-continue, final without a size.
		"\x60offset=0&final=true\n\n\x08abcdefgh",
		// An empty final chunk, then the import fails before it read the stream's end.
		"\x00offset=0&final=true\n\n\x00\x07\n\n\x00",
		// A final chunk short of the size, then the rest.
		"\x00offset=0&final=true\n8\n\x04abcd\x00offset=@&final=true\n\n\x04efgh",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		testsupport.Deadline(20*time.Second, func() { runUploadScript(t, parseUploadScript(script)) })
	})
}

// uploadStep is one request of a fuzzed upload, or the import failing (fail).
type uploadStep struct {
	method, path string
	// query and size are the raw query and X-Upload-Size ("" sends none); "@" in query stands
	// for the Received of the last answer.
	query, size string
	body        []byte
	// chunked sends the body without a Content-Length; cut ends it early, as a lost
	// connection does; expect sends Expect: 100-continue.
	chunked, cut, expect, fail bool
}

// parseUploadScript reads a script of steps, each: a byte of kind (bits 0-2: 0-2 PUT, 3 GET,
// 4 HEAD, 5 POST, 6 PUT at another path, 7 the import fails) and flags (8 chunked, 16 cut
// short, 32 Expect: 100-continue, 64 the body repeated 512 times), the query up to a newline,
// the X-Upload-Size up to a newline, the body's length in a byte and the body.
func parseUploadScript(script []byte) []uploadStep {
	var steps []uploadStep
	line := func() string {
		i := bytes.IndexByte(script, '\n')
		if i < 0 {
			i = len(script)
		}
		s := string(script[:i])
		script = script[min(i+1, len(script)):]
		return s
	}
	for len(script) > 0 && len(steps) < 24 {
		op := script[0]
		script = script[1:]
		s := uploadStep{method: http.MethodPut, path: uploadapi.Path, chunked: op&8 != 0, cut: op&16 != 0, expect: op&32 != 0}
		switch op & 7 {
		case 3:
			s.method = http.MethodGet
		case 4:
			s.method = http.MethodHead
		case 5:
			s.method = http.MethodPost
		case 6:
			s.path = "/other"
		case 7:
			s.fail = true
		}
		s.query, s.size = line(), line()
		n := 0
		if len(script) > 0 {
			n, script = min(int(script[0]), len(script)-1), script[1:]
		}
		s.body, script = script[:n], script[n:]
		if op&64 != 0 {
			s.body = bytes.Repeat(s.body, 512)
		}
		steps = append(steps, s)
	}
	return steps
}

// cutBody is a body that ends with a lost connection after its bytes.
type cutBody struct{ r io.Reader }

func (b cutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (cutBody) Close() error { return nil }

// request builds s's request as the HTTP server would hand it to the handler, with "@" in the
// query standing for received.
func (s uploadStep) request(ctx context.Context, received int64) *http.Request {
	r := &http.Request{Method: s.method, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Host: "upload",
		URL:  &url.URL{Path: s.path, RawQuery: strings.ReplaceAll(s.query, "@", strconv.FormatInt(received, 10))},
		Body: io.NopCloser(bytes.NewReader(s.body)), ContentLength: int64(len(s.body))}
	if s.size != "" {
		r.Header.Set(uploadapi.SizeHeader, s.size)
	}
	if s.expect {
		r.Header.Set("Expect", "100-continue")
	}
	if s.cut {
		r.Body, r.ContentLength = cutBody{bytes.NewReader(s.body)}, int64(len(s.body))+1
	}
	if s.chunked {
		r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
	}
	if len(s.body) == 0 && !s.cut && !s.chunked {
		r.Body = http.NoBody
	}
	return r.WithContext(ctx)
}

// uploadImport is the import's side of a fuzzed upload: it reads the accepted bytes as
// ImportUpload's import does, until the stream ends or the import is made to fail.
type uploadImport struct {
	src    *UploadSource
	cancel context.CancelFunc
	ended  chan struct{}

	mu   sync.Mutex
	got  bytes.Buffer
	err  error // how the stream ended
	body io.ReadCloser
}

func startUploadImport(src *UploadSource) *uploadImport {
	ctx, cancel := context.WithCancel(context.Background())
	imp := &uploadImport{src: src, cancel: cancel, ended: make(chan struct{})}
	go func() {
		defer close(imp.ended)
		body, _, err := src.Open(ctx)
		if err != nil {
			imp.err = err
			return
		}
		imp.mu.Lock()
		imp.body = body
		imp.mu.Unlock()
		_, imp.err = io.Copy(imp, body)
	}()
	return imp
}

func (imp *uploadImport) Write(p []byte) (int, error) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	return imp.got.Write(p)
}

// stop stops reading, as an import that ended does.
func (imp *uploadImport) stop() {
	imp.cancel()
	<-imp.ended
	if imp.body != nil {
		imp.body.Close()
	}
}

// errFuzzImportFailed is the failure of a fuzzed import.
var errFuzzImportFailed = errors.New("the fuzzed import failed")

// uploadCheck is what a fuzzed upload's answers established so far.
type uploadCheck struct {
	t        *testing.T
	src      *UploadSource
	received int64
	done     bool
	failed   bool
	accepted bytes.Buffer // the bytes Received covers
}

// runUploadScript plays steps to a fresh upload source and checks every answer and, at the
// end, what the import read.
func runUploadScript(t *testing.T, steps []uploadStep) {
	src := NewUploadSource("unused")
	var progress int64
	src.Progress = func(received, total int64) {
		if received < progress || (total >= 0 && received > total) {
			t.Errorf("progress %d of %d after %d", received, total, progress)
		}
		progress = received
	}
	imp := startUploadImport(src)
	c := &uploadCheck{t: t, src: src}
	for i, s := range steps {
		if s.fail {
			if !c.failed {
				imp.stop()
				src.finish(errFuzzImportFailed)
				c.failed = true
			}
			continue
		}
		w := httptest.NewRecorder()
		src.ServeHTTP(w, s.request(context.Background(), c.received))
		c.answer(i, s, w.Result())
	}
	if !c.failed {
		if c.done {
			// The final chunk ended the stream: the import reads to its end by itself.
			select {
			case <-imp.ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the upload is done, but the import's stream did not end")
			}
		}
		imp.stop()
	}
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if !bytes.Equal(imp.got.Bytes(), c.accepted.Bytes()) {
		t.Errorf("the import read %q, the server accepted %q", imp.got.Bytes(), c.accepted.Bytes())
	}
	// An import stopped by its failure may see the stop instead of the stream's end, even after
	// the final chunk (an empty one wrote nothing the import had to read first).
	if c.done && !c.failed && imp.err != nil {
		t.Errorf("the upload is done, but the import's stream ended with %v", imp.err)
	}
}

// answer checks the answer to step i, s.
func (c *uploadCheck) answer(i int, s uploadStep, resp *http.Response) {
	t := c.t
	raw, _ := io.ReadAll(resp.Body)
	code := resp.StatusCode
	if s.path != uploadapi.Path {
		if code != http.StatusNotFound {
			t.Fatalf("step %d: %s %s answered %d, want 404", i, s.method, s.path, code)
		}
		return
	}
	var st uploadapi.Status
	if err := json.Unmarshal(raw, &st); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("step %d: the answer %d %q (%s) is not an uploadapi.Status: %v", i, code, raw, resp.Header.Get("Content-Type"), err)
	}
	switch code {
	case http.StatusOK, http.StatusConflict:
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		if st.Error == "" {
			t.Fatalf("step %d: %d without a reason", i, code)
		}
	case http.StatusUnprocessableEntity:
		if !c.failed {
			t.Fatalf("step %d: 422 %+v before the import failed", i, st)
		}
		if st.Error != errFuzzImportFailed.Error() {
			t.Fatalf("step %d: 422 with %q, want the import's failure", i, st.Error)
		}
	default:
		t.Fatalf("step %d: %s answered %d %q", i, s.method, code, raw)
	}
	if c.failed && code != http.StatusUnprocessableEntity && code != http.StatusBadRequest && code != http.StatusMethodNotAllowed {
		t.Fatalf("step %d: %s answered %d %+v after the import failed, want 422", i, s.method, code, st)
	}
	c.progress(i, s, code, st)
}

// progress checks how far the answer st (with code) to step i moved the upload, and records it.
func (c *uploadCheck) progress(i int, s uploadStep, code int, st uploadapi.Status) {
	t := c.t
	delta := st.Received - c.received
	switch {
	case delta < 0:
		t.Fatalf("step %d: Received went back from %d to %d", i, c.received, st.Received)
	case delta > int64(len(s.body)):
		t.Fatalf("step %d: Received moved by %d, more than the body's %d bytes", i, delta, len(s.body))
	case delta > 0 && (s.method != http.MethodPut || c.done || c.failed):
		t.Fatalf("step %d: %s moved Received by %d (done %v, failed %v)", i, s.method, delta, c.done, c.failed)
	case delta > 0 && !atOffset(s.query, c.received):
		t.Fatalf("step %d: a PUT with query %q moved Received from %d by %d", i, s.query, c.received, delta)
	case code == http.StatusOK && s.method == http.MethodPut && delta != int64(len(s.body)):
		t.Fatalf("step %d: a 200 to a PUT of %d bytes moved Received by %d", i, len(s.body), delta)
	case c.done && !st.Done:
		t.Fatalf("step %d: Done was unset", i)
	case st.Done && !c.done && (code != http.StatusOK || s.method != http.MethodPut || !final(s.query)):
		t.Fatalf("step %d: %s (query %q) answered %d set Done", i, s.method, s.query, code)
	}
	c.accepted.Write(s.body[:delta])
	c.received, c.done = st.Received, st.Done
	c.src.mu.Lock()
	received, total := c.src.received, c.src.total
	c.src.mu.Unlock()
	if received != st.Received {
		t.Fatalf("step %d: the answer says %d bytes received, the source %d", i, st.Received, received)
	}
	if total >= 0 && received > total {
		t.Fatalf("step %d: %d bytes received, past the announced X-Upload-Size of %d", i, received, total)
	}
}

// atOffset reports whether query's offset is received.
func atOffset(query string, received int64) bool {
	q, _ := url.ParseQuery(strings.ReplaceAll(query, "@", strconv.FormatInt(received, 10)))
	off, err := strconv.ParseInt(q.Get(uploadapi.OffsetParam), 10, 64)
	return err == nil && off == received
}

// final reports whether query asks for the final chunk.
func final(query string) bool {
	q, _ := url.ParseQuery(query)
	b, _ := strconv.ParseBool(q.Get(uploadapi.FinalParam))
	return b
}
