package webui

import (
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
)

// consolePath is KubeVirt's console subresource of VMI default/vm1, a websocket.
const consolePath = "/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachineinstances/vm1/console"

// plainProtocol is KubeVirt's websocket subprotocol for console and VNC.
const plainProtocol = "plain.kubevirt.io"

// testIndex is the index.html of the test assets.
const testIndex = "<!doctype html><title>test console</title><script src=\"/app.js\"></script>"

// testAssets stand in for the built UI.
func testAssets() fstest.MapFS {
	return fstest.MapFS{
		"index.html":         {Data: []byte(testIndex)},
		"app.js":             {Data: []byte("console.log('app');")},
		"static/style.css":   {Data: []byte("body{}")},
		"static/empty/.keep": {Data: nil},
	}
}

// seenRequest is what the fake kube-apiserver received.
type seenRequest struct {
	method, path string
	protoMajor   int
	header       http.Header
}

// fakeAPI stands in for kube-apiserver: TLS with HTTP/2 offered (websockets go over HTTP/1.1),
// a namespace list, a console websocket that greets and echoes, and a streaming watch.
type fakeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
	// received is what the console websocket got from the browser's side.
	received chan string
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{received: make(chan string, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "upstream=1")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, `{"kind":"NamespaceList","apiVersion":"v1","items":[{"metadata":{"name":"default"}}]}`)
	})
	mux.HandleFunc("/api/v1/watch/namespaces", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"ADDED"}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a watch stays open until the client goes
	})
	mux.HandleFunc("/api/v1/unauthorized", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="kubernetes-master"`)
		http.Error(w, `{"kind":"Status","message":"Unauthorized"}`, http.StatusUnauthorized)
	})
	mux.HandleFunc(consolePath, f.console)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "upstream "+r.URL.Path)
	})
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, seenRequest{method: r.Method, path: r.URL.Path, protoMajor: r.ProtoMajor, header: r.Header.Clone()})
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	f.EnableHTTP2 = true
	f.StartTLS()
	t.Cleanup(f.Close)
	return f
}

// console is the websocket echo standing in for a VMI's serial console. The upgrader's default
// Origin check refuses an Origin that is not the fake server's own: the proxy must drop it.
func (f *fakeAPI) console(w http.ResponseWriter, r *http.Request) {
	upgrader := websocket.Upgrader{Subprotocols: []string{plainProtocol}}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if err := conn.WriteMessage(websocket.BinaryMessage, []byte("login: ")); err != nil {
		return
	}
	for {
		kind, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		f.received <- string(msg)
		if err := conn.WriteMessage(kind, append([]byte("echo:"), msg...)); err != nil {
			return
		}
	}
}

// requests is what the fake kube-apiserver has received so far.
func (f *fakeAPI) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

// lastRequest is the last request to path, failing the test if there was none.
func (f *fakeAPI) lastRequest(t *testing.T, path string) seenRequest {
	t.Helper()
	reqs := f.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].path == path {
			return reqs[i]
		}
	}
	t.Fatalf("kube-apiserver saw no request to %s (saw %d others)", path, len(reqs))
	return seenRequest{}
}

// restConfig reaches f with a bearer token, trusting its certificate.
func (f *fakeAPI) restConfig(token string) *rest.Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	return &rest.Config{Host: f.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// fixture is a Server serving on loopback, and a browser's view of it.
type fixture struct {
	srv    *Server
	host   string // 127.0.0.1:PORT
	base   string // http://127.0.0.1:PORT
	client *http.Client
	cookie *http.Cookie
}

// startServer serves the test assets and proxies with cfg until the test ends; tweak may
// change the server before it serves.
func startServer(t *testing.T, cfg *rest.Config, tweak func(*Server)) *fixture {
	t.Helper()
	s, err := New(Options{REST: cfg, Assets: testAssets()})
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return within 10 s of its context's end")
		}
	})
	host := "127.0.0.1:" + strconv.Itoa(s.Port())
	return &fixture{
		srv:  s,
		host: host,
		base: "http://" + host,
		client: &http.Client{
			Transport:     &http.Transport{Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       30 * time.Second,
		},
		cookie: &http.Cookie{Name: s.cookieName(), Value: s.secret},
	}
}

// do sends a request to path with the given headers ("Host" sets the Host) and returns the
// response with its body read.
func (fx *fixture) do(t *testing.T, method, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, fx.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := fx.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp, string(body)
}

// withCookie is header plus the session cookie.
func (fx *fixture) withCookie(header map[string]string) map[string]string {
	out := map[string]string{"Cookie": fx.cookie.String()}
	for k, v := range header {
		out[k] = v
	}
	return out
}

// dialWS opens a websocket to path through the server with the given headers and subprotocols.
func (fx *fixture) dialWS(path string, header http.Header, protocols ...string) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{
		Subprotocols:     protocols,
		HandshakeTimeout: 10 * time.Second,
		NetDialContext:   (&net.Dialer{}).DialContext,
	}
	return d.Dial("ws://"+fx.host+path, header)
}

// wantStatus fails the test unless resp has status code and, when want is not empty, a body
// holding want.
func wantStatus(t *testing.T, resp *http.Response, body string, code int, want string) {
	t.Helper()
	if resp.StatusCode != code {
		t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, code)
	}
	if want != "" && !strings.Contains(body, want) {
		t.Fatalf("body %q does not say %q", body, want)
	}
}
