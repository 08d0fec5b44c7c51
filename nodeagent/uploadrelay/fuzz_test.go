package uploadrelay

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/testsupport"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// FuzzUploadRelay sends arbitrary requests of the datavolumes/upload relay (any method, query,
// headers and body: vireo-apiserver passes the user's chunk, the protocol's parameters and its
// headers) through the node agent's relay to an upload Pod's socket, whose importer, in the
// user's Pod, answers anything. The relay must pass the upload Pod only the protocol:
//   - the path uploadapi.Path, only the offset and final parameters (the user's first values),
//     only the headers Content-Type, Accept and X-Upload-Size with the user's values, besides
//     what the relay's own HTTP client adds, and the body unchanged;
//   - a request for a DataVolume without an upload Pod on the node reaches no Pod and is
//     answered 503 with a message;
//   - the importer's answer reaches the user with its status and body, or as a 502 with a
//     message; the relay never hangs.
func FuzzUploadRelay(f *testing.F) {
	testsupport.QuietKlog(f)
	for _, seed := range []struct {
		req, answer string
	}{
		{"PUT up\noffset=0&final=true&uid=dv-uid\nContent-Type: application/octet-stream\nX-Upload-Size: 5\n\nhello", "\x00Content-Type: application/json\n\n{\"received\":5}"},
		{"GET up\nuid=dv-uid\nAccept: application/json\n\n", "\x00\n{\"received\":0}"},
		{"PUT up\noffset=0&offset=7&final=yes&other=x\nAuthorization: Bearer secret\nCookie: a=b\nX-Remote-User: admin\nImpersonate-User: admin\nConnection: X-Upload-Size\nX-Upload-Size: 3\n\nabc", "\x05\n{\"received\":0}"},
		{"PUT up\noffset=0\nTransfer-Encoding: chunked\nExpect: 100-continue\n\nxyz", "\x04Connection: close\nX-Other: 1\n\nconflict"},
		{"GET nothing\n\n\n", "\x00\n"},
		{"GET up\nuid=other\n\n", "\x00\n"},
		{"HEAD up\n\n\n", "\x02\n"},
		{"DELETE up\n\n\n", "\x00\n"},
	} {
		f.Add([]byte(seed.req), []byte(seed.answer))
	}
	h := newRelayHarness(f)
	f.Fuzz(func(t *testing.T, request, answer []byte) {
		testsupport.Deadline(30*time.Second, func() { h.run(t, request, answer) })
	})
}

// relayCodes are the statuses a fuzzed importer answers, by the answer's first byte.
var relayCodes = []int{200, 201, 204, 304, 400, 409, 422, 500, 503, 404}

// relayHarness is a node with the running upload Pod of DataVolume ns/up (UID dv-uid), whose
// importer answers each request as told and records it.
type relayHarness struct {
	mux *http.ServeMux

	mu     sync.Mutex
	answer fuzzAnswer
	got    *http.Request // the request the importer last received, with its body in gotBody
	body   []byte
}

// fuzzAnswer is an importer's answer.
type fuzzAnswer struct {
	code   int
	header http.Header
	body   []byte
}

func newRelayHarness(f *testing.F) *relayHarness {
	dirs := nodedirstest.New(f)
	dir := nodedirstest.EmptyDir(f, dirs, "up1")
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = pods.Add(uploadPodFor("ns", "up", "dv-uid", "up1"))
	h := &relayHarness{mux: http.NewServeMux()}
	New(corelisters.NewPodLister(pods), dirs).Register(h.mux)
	l, err := net.Listen("unix", filepath.Join(dir, uploadapi.SocketName))
	if err != nil {
		f.Fatal(err)
	}
	importer := &http.Server{Handler: http.HandlerFunc(h.importer), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = importer.Serve(l) }()
	f.Cleanup(func() { importer.Close() })
	return h
}

// importer records the request and answers the harness's answer.
func (h *relayHarness) importer(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got, h.body = r, body
	a := h.answer
	h.mu.Unlock()
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.code)
	_, _ = w.Write(a.body)
}

// parseRelayRequest reads a request: "METHOD dv" line, the raw query line, header lines up to
// an empty line, then the body.
func parseRelayRequest(script []byte) (*http.Request, []byte) {
	lines := strings.SplitN(string(script), "\n", 3)
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	method, dv, _ := strings.Cut(lines[0], " ")
	if method == "" || strings.ContainsAny(method, " \t\r()<>@,;:\\\"/[]?={}") || dv == "" || dv == "." || dv == ".." || strings.ContainsAny(dv, "/?#%") {
		return nil, nil
	}
	header, body := parseHeader(lines[2])
	r := httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(body))
	r.Method, r.Header, r.ContentLength = method, header, int64(len(body))
	r.URL = &url.URL{Path: "/v1/namespaces/ns/datavolumes/" + dv + "/upload", RawQuery: lines[1]}
	r.RequestURI = r.URL.RequestURI()
	if strings.EqualFold(header.Get("Transfer-Encoding"), "chunked") {
		r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
	}
	return r, body
}

// parseHeader reads "Key: value" lines up to an empty line, and returns them and the rest.
func parseHeader(s string) (http.Header, []byte) {
	header := http.Header{}
	for {
		line, rest, found := strings.Cut(s, "\n")
		if !found || line == "" {
			if !found && line != "" {
				rest = ""
			}
			return header, []byte(rest)
		}
		s = rest
		if k, v, ok := strings.Cut(line, ":"); ok && validHeader(k, strings.TrimSpace(v)) {
			header.Add(k, strings.TrimSpace(v))
		}
	}
}

// validHeader reports whether an HTTP server accepts the header k: v (RFC 9110: k a token, v
// without control characters but tabs), as vireo-apiserver's, before the relay, does.
func validHeader(k, v string) bool {
	if k == "" || strings.ContainsFunc(k, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r)
	}) {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

// run relays request to an importer answering answer, and checks both sides.
func (h *relayHarness) run(t *testing.T, request, answer []byte) {
	req, body := parseRelayRequest(request)
	if req == nil || len(answer) == 0 {
		return
	}
	header, answerBody := parseHeader(string(answer[1:]))
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Trailer"} {
		header.Del(k) // the importer's HTTP server frames its answers itself
	}
	a := fuzzAnswer{code: relayCodes[int(answer[0])%len(relayCodes)], header: header, body: answerBody}
	h.mu.Lock()
	h.answer, h.got, h.body = a, nil, nil
	h.mu.Unlock()
	w := httptest.NewRecorder()
	h.mux.ServeHTTP(w, req)
	h.mu.Lock()
	got, gotBody := h.got, h.body
	h.mu.Unlock()
	if got == nil {
		checkUnrelayed(t, req, w)
		return
	}
	checkRelayed(t, req, body, got, gotBody)
	resp := w.Result()
	answered, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusBadGateway && len(answered) > 0:
	case resp.StatusCode != a.code:
		t.Fatalf("the importer answered %d, the user got %d %q", a.code, resp.StatusCode, answered)
	case a.code != http.StatusNoContent && a.code != http.StatusNotModified && req.Method != http.MethodHead &&
		a.header.Get("Content-Encoding") == "" && !bytes.Equal(answered, a.body): // the relay's client undoes a gzip it asked for
		t.Fatalf("the importer answered %q, the user got %q", a.body, answered)
	}
}

// checkUnrelayed checks the answer to req, which reached no importer.
func checkUnrelayed(t *testing.T, req *http.Request, w *httptest.ResponseRecorder) {
	known := req.URL.Path == "/v1/namespaces/ns/datavolumes/up/upload" && (req.URL.Query().Get("uid") == "" || req.URL.Query().Get("uid") == "dv-uid")
	switch {
	case req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != http.MethodPut:
		if w.Code != http.StatusMethodNotAllowed && w.Code != http.StatusNotFound {
			t.Fatalf("%s %s answered %d %q", req.Method, req.URL, w.Code, w.Body)
		}
	case known:
		t.Fatalf("%s %s did not reach the upload Pod: %d %q", req.Method, req.URL, w.Code, w.Body)
	case w.Code != http.StatusServiceUnavailable || w.Body.Len() == 0:
		t.Fatalf("%s %s for no upload Pod answered %d %q, want 503 with a message", req.Method, req.URL, w.Code, w.Body)
	}
}

// checkRelayed checks what the importer received, got and gotBody, for the user's req and body.
func checkRelayed(t *testing.T, req *http.Request, body []byte, got *http.Request, gotBody []byte) {
	if got.Method != req.Method || got.URL.Path != uploadapi.Path {
		t.Fatalf("%s %s reached the importer as %s %s", req.Method, req.URL, got.Method, got.URL)
	}
	in, out := req.URL.Query(), got.URL.Query()
	for k := range out {
		if (k != uploadapi.OffsetParam && k != uploadapi.FinalParam) || len(out[k]) != 1 || out.Get(k) != in.Get(k) {
			t.Fatalf("the query %q reached the importer as %q", req.URL.RawQuery, got.URL.RawQuery)
		}
	}
	for _, k := range []string{uploadapi.OffsetParam, uploadapi.FinalParam} {
		if in.Get(k) != out.Get(k) {
			t.Fatalf("the query %q reached the importer as %q", req.URL.RawQuery, got.URL.RawQuery)
		}
	}
	for k, v := range got.Header {
		switch k {
		case "Content-Type", "Accept", uploadapi.SizeHeader:
			if len(v) != 1 || v[0] != req.Header.Get(k) {
				t.Fatalf("the header %s: %q reached the importer as %q", k, req.Header.Values(k), v)
			}
		case "Accept-Encoding": // the relay's client asks for gzip itself
			if len(v) != 1 || v[0] != "gzip" {
				t.Fatalf("Accept-Encoding %q reached the importer", v)
			}
		case "Content-Length", "Connection": // the relay's client's own framing
		default:
			t.Fatalf("the header %s: %q reached the importer (the user sent %v)", k, v, req.Header)
		}
	}
	if !bytes.Equal(gotBody, body) {
		t.Fatalf("the body %q reached the importer as %q", body, gotBody)
	}
	if cl := got.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
		t.Fatalf("Content-Length %s for a body of %d bytes", cl, len(body))
	}
}
