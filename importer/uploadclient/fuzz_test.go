package uploadclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// FuzzTransfer plays arbitrary servers to vireoctl image-upload's transfer loop, over HTTP
// (HTTP.do reads each answer). The answers come from the importer in the user's upload Pod
// and the relays before it (node agent, vireo-apiserver, kube-apiserver), so they can say
// anything: any status, an uploadapi.Status with any position, a Kubernetes Status, garbage,
// or no answer. The server's answers repeat from the start when the script ends, so the loop
// ends only by its own bounds. The client must:
//   - end, within a bound of requests, without panicking;
//   - send only chunks inside the image (offset and length within its size), with the
//     image's bytes at that offset, the Content-Length, X-Upload-Size and final of the chunk;
//   - report success only after the server said Done with the image's size, and a failure
//     the server stated (422 with an uploadapi.Status) as ErrFailed with its message;
//   - report progress only within the image.
func FuzzTransfer(f *testing.F) {
	for _, seed := range []string{
		// 10 bytes in chunks of 3 then 7: position, two chunks, done.
		"\x0a\x00{\"received\":0}\n\x00{\"received\":@}\n\x00{\"received\":@,\"done\":true}\n",
		// A lost answer, a 503 from a relay (a Kubernetes Status), a 409 resuming elsewhere.
		"\x0a\x0b\n\x05{\"kind\":\"Status\",\"message\":\"try again\"}\n\x00{\"received\":0}\n\x01{\"received\":2}\n\x00{\"received\":@}\n\x00{\"received\":@,\"done\":true}\n",
		// The import fails.
		"\x05\x00{\"received\":0}\n\x02{\"received\":0,\"error\":\"the image is larger than the volume\"}\n",
		// A 200 that does not move, garbage, a 404 with text, a position past the image.
		"\x05\x00{\"received\":0}\n\x00{\"received\":0}\n",
		"\x05\x00not json\n\x06404 page not found\n\x00{\"received\":99}\n",
		// Already done with another size; an empty image.
		"\x05\x00{\"received\":3,\"done\":true}\n",
		"\x00\x00{\"received\":0}\n\x00{\"received\":0,\"done\":true}\n",
		// A server that keeps answering 409 at 0, and one that moves back and forth.
		"\x3f\x01{\"received\":0}\n",
		"\x3f\x00{\"received\":0}\n\x00{\"received\":@}\n\x01{\"received\":0}\n\x00{\"received\":@}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) == 0 {
			return
		}
		testsupport.Deadline(20*time.Second, func() { runTransfer(t, int64(script[0]%64), parseAnswers(script[1:])) })
	})
}

// answerCodes are the statuses a fuzzed server answers, by a script's code byte; a byte past
// them is no answer (a network error).
var answerCodes = []int{200, 409, 422, 400, 408, 503, 404, 500, 429, 201}

// serverAnswer is one answer of a fuzzed server: code, or none (no answer at all), and the
// body, in which "@" stands for the end of the chunk sent (for a GET, of the last chunk) and
// "#" for the image's size.
type serverAnswer struct {
	code int
	body string
}

// parseAnswers reads answers, each a code byte and a body up to a newline.
func parseAnswers(script []byte) []serverAnswer {
	var out []serverAnswer
	for len(script) > 0 && len(out) < 32 {
		a := serverAnswer{}
		if i := int(script[0]); i < len(answerCodes) {
			a.code = answerCodes[i]
		}
		script = script[1:]
		i := bytes.IndexByte(script, '\n')
		if i < 0 {
			i = len(script)
		}
		a.body, script = string(script[:i]), script[min(i+1, len(script)):]
		out = append(out, a)
	}
	return out
}

// fuzzServer is a server answering from a script, checking the requests as they come.
type fuzzServer struct {
	t        *testing.T
	image    []byte
	answers  []serverAnswer
	requests int
	lastEnd  int64 // the end of the last chunk sent
	last     *serverAnswer
}

// RoundTrip checks a request of the transfer loop and answers the next answer.
func (s *fuzzServer) RoundTrip(req *http.Request) (*http.Response, error) {
	t := s.t
	s.requests++
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	end := s.lastEnd
	switch req.Method {
	case http.MethodGet:
		if len(body) != 0 {
			t.Errorf("a GET with a body of %d bytes", len(body))
		}
	case http.MethodPut:
		end = s.checkChunk(req, body)
		s.lastEnd = end
	default:
		t.Errorf("a %s request", req.Method)
	}
	if len(s.answers) == 0 {
		s.last = nil
		return nil, errors.New("no server")
	}
	a := s.answers[(s.requests-1)%len(s.answers)]
	s.last = &a
	if a.code == 0 {
		return nil, errors.New("the connection was reset")
	}
	text := strings.NewReplacer("@", strconv.FormatInt(end, 10), "#", strconv.Itoa(len(s.image))).Replace(a.body)
	return &http.Response{StatusCode: a.code, Status: fmt.Sprintf("%d %s", a.code, http.StatusText(a.code)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader(text)), ContentLength: int64(len(text)), Request: req}, nil
}

// checkChunk checks a PUT of body and returns the end of its chunk.
func (s *fuzzServer) checkChunk(req *http.Request, body []byte) int64 {
	t := s.t
	size := int64(len(s.image))
	q := req.URL.Query()
	off, err := strconv.ParseInt(q.Get(uploadapi.OffsetParam), 10, 64)
	n := int64(len(body))
	switch {
	case err != nil || off < 0 || off+n > size:
		t.Fatalf("a chunk of %d bytes at offset %q of a %d-byte image", n, q.Get(uploadapi.OffsetParam), size)
	case !bytes.Equal(body, s.image[off:off+n]):
		t.Fatalf("the chunk at %d is not the image's bytes there", off)
	case req.ContentLength != n:
		t.Fatalf("a chunk of %d bytes sent with Content-Length %d", n, req.ContentLength)
	case req.Header.Get(uploadapi.SizeHeader) != strconv.FormatInt(size, 10):
		t.Fatalf("%s %q for a %d-byte image", uploadapi.SizeHeader, req.Header.Get(uploadapi.SizeHeader), size)
	case (q.Get(uploadapi.FinalParam) == "true") != (off+n == size):
		t.Fatalf("the chunk of %d bytes at %d of %d sent with final=%q", n, off, size, q.Get(uploadapi.FinalParam))
	}
	return off + n
}

// runTransfer uploads an image of size bytes to a server answering answers, and checks the
// outcome.
func runTransfer(t *testing.T, size int64, answers []serverAnswer) {
	image := make([]byte, size)
	for i := range image {
		image[i] = byte(i*7 + 1)
	}
	srv := &fuzzServer{t: t, image: image, answers: answers}
	o := Options{ChunkSize: 7, FirstChunk: 3, MinChunk: 1, Retries: 3, Backoff: time.Nanosecond, MaxBackoff: time.Nanosecond}
	api := &HTTP{Client: &http.Client{Transport: srv}, URL: "http://upload" + uploadapi.Path}
	err := Transfer(context.Background(), api, bytes.NewReader(image), size, o, func(sent int64) {
		if sent < 0 || sent > size {
			t.Fatalf("progress %d of a %d-byte image", sent, size)
		}
	})
	// Between two gains of the position (at most size+1 of them), at most Retries+1 failures,
	// each followed by at most a GET and size+1 chunks that catch up to the best position.
	if bound := (size + 2) * int64(o.Retries+2) * (size + 3); int64(srv.requests) > bound {
		t.Fatalf("%d requests for a %d-byte image, more than %d", srv.requests, size, bound)
	}
	if err != nil {
		checkFailure(t, srv, err)
		return
	}
	var st uploadapi.Status
	if srv.last == nil || srv.last.code != http.StatusOK || !parsesAs(srv.last.body, size, srv.lastEnd, &st) || !st.Done || st.Received != size {
		t.Fatalf("Transfer succeeded after the answer %+v", srv.last)
	}
}

// checkFailure checks the error Transfer returned after the last answer.
func checkFailure(t *testing.T, srv *fuzzServer, err error) {
	if err.Error() == "" {
		t.Fatal("Transfer failed with an empty message")
	}
	if srv.last == nil || srv.last.code != http.StatusUnprocessableEntity {
		return
	}
	var st uploadapi.Status
	parsesAs(srv.last.body, int64(len(srv.image)), srv.lastEnd, &st)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), st.Error) {
		t.Fatalf("the server answered 422 %q; Transfer returned %v", srv.last.body, err)
	}
}

// parsesAs reports whether body (with "@" end and "#" size) is an uploadapi.Status as HTTP.do
// reads it, into st.
func parsesAs(body string, size, end int64, st *uploadapi.Status) bool {
	text := strings.NewReplacer("@", strconv.FormatInt(end, 10), "#", strconv.FormatInt(size, 10)).Replace(body)
	reply, err := (&HTTP{Client: &http.Client{Transport: fixedAnswer(text)}, URL: (&url.URL{Scheme: "http", Host: "upload"}).String()}).Position(context.Background())
	if err != nil || !reply.Parsed {
		return false
	}
	*st = reply.Status
	return true
}

// fixedAnswer answers every request 200 with itself.
type fixedAnswer string

func (a fixedAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(string(a))), Request: req}, nil
}
