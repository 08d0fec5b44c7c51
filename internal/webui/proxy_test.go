package webui

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// browserHeaders are credentials and impersonation a page might try to send; none may reach
// kube-apiserver.
var browserHeaders = map[string]string{
	"Authorization":     "Bearer browser-token",
	"Impersonate-User":  "admin",
	"Impersonate-Group": "system:masters",
	"Impersonate-Uid":   "0",
	"X-Remote-User":     "admin",
}

// wantNoBrowserHeaders fails the test if seen carries any header the browser must not pass on.
func wantNoBrowserHeaders(t *testing.T, seen seenRequest) {
	t.Helper()
	for name, values := range seen.header {
		lower := strings.ToLower(name)
		if lower == "cookie" || lower == "origin" || strings.HasPrefix(lower, "x-remote-") ||
			(strings.HasPrefix(lower, "impersonate-") && lower != "impersonate-user") {
			t.Errorf("kube-apiserver saw %s: %q", name, values)
		}
	}
	if got := seen.header.Values("Impersonate-User"); len(got) > 0 && (len(got) != 1 || got[0] != "alice") {
		t.Errorf("kube-apiserver saw Impersonate-User %q: the browser's must not pass", got)
	}
}

func TestAPIRequestsGoWithTheUsersCredentials(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.restConfig("rest-token")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice"} // --as alice
	fx := startServer(t, cfg, nil)
	header := fx.withCookie(browserHeaders)
	header["Accept"] = "application/json"
	resp, body := fx.do(t, http.MethodGet, "/api/v1/namespaces", header)
	wantStatus(t, resp, body, http.StatusOK, `"name":"default"`)
	seen := api.lastRequest(t, "/api/v1/namespaces")
	if got := seen.header.Get("Authorization"); got != "Bearer rest-token" {
		t.Errorf("kube-apiserver saw Authorization %q, want the rest.Config's bearer token", got)
	}
	if got := seen.header.Values("Impersonate-User"); len(got) != 1 || got[0] != "alice" {
		t.Errorf("kube-apiserver saw Impersonate-User %q, want only the command line's alice", got)
	}
	wantNoBrowserHeaders(t, seen)
	if seen.protoMajor != 2 {
		t.Errorf("the API request went over HTTP/%d, want client-go's HTTP/2", seen.protoMajor)
	}
	if got := seen.header.Get("Accept"); got != "application/json" {
		t.Errorf("kube-apiserver saw Accept %q, want the page's", got)
	}
	for name, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Set-Cookie": "", "Access-Control-Allow-Origin": ""} {
		if got := strings.Join(resp.Header.Values(name), ", "); got != want {
			t.Errorf("response %s %q, want %q", name, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("API response CSP %q", csp)
	}
}

func TestAnUpstreamRefusalReachesThePageWithoutAPasswordPrompt(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	resp, body := fx.do(t, http.MethodGet, "/api/v1/unauthorized", fx.withCookie(nil))
	wantStatus(t, resp, body, http.StatusUnauthorized, "Unauthorized")
	if got := resp.Header.Get("WWW-Authenticate"); got != "" {
		t.Errorf("WWW-Authenticate %q reached the browser, which would ask for a password", got)
	}
}

// execConfig runs command as a kubeconfig exec credential plugin.
func execConfig(command string) *clientcmdapi.ExecConfig {
	return &clientcmdapi.ExecConfig{
		Command:         command,
		APIVersion:      "client.authentication.k8s.io/v1",
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
}

// authProvider is a kubeconfig auth-provider entry.
func authProvider() *clientcmdapi.AuthProviderConfig {
	return &clientcmdapi.AuthProviderConfig{Name: "oidc"}
}

func TestAnExecPluginsCredentialIsUsed(t *testing.T) {
	api := newFakeAPI(t)
	plugin := filepath.Join(t.TempDir(), "credential-plugin")
	script := "#!/bin/sh\ncat <<'EOF'\n" +
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-token"}}` +
		"\nEOF\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := api.restConfig("")
	cfg.ExecProvider = execConfig(plugin)
	fx := startServer(t, cfg, nil)
	header := fx.withCookie(browserHeaders)
	resp, body := fx.do(t, http.MethodGet, "/api/v1/namespaces", header)
	wantStatus(t, resp, body, http.StatusOK, `"name":"default"`)
	seen := api.lastRequest(t, "/api/v1/namespaces")
	if got := seen.header.Get("Authorization"); got != "Bearer exec-token" {
		t.Errorf("kube-apiserver saw Authorization %q, want the exec plugin's token", got)
	}
	wantNoBrowserHeaders(t, seen)

	// The console's websocket goes with the plugin's token too.
	conn, _, err := fx.dialWS(consolePath, http.Header{"Cookie": {fx.cookie.String()}, "Origin": {fx.base}}, plainProtocol)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	conn.Close()
	if got := api.lastRequest(t, consolePath).header.Get("Authorization"); got != "Bearer exec-token" {
		t.Errorf("the websocket reached kube-apiserver with Authorization %q, want the exec plugin's token", got)
	}
}

func TestAConsoleWebsocketIsProxiedEndToEnd(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.restConfig("rest-token")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	fx := startServer(t, cfg, nil)
	header := http.Header{"Cookie": {fx.cookie.String()}, "Origin": {fx.base}}
	for k, v := range browserHeaders {
		header.Set(k, v)
	}
	conn, resp, err := fx.dialWS(consolePath, header, plainProtocol, tokenSubprotocolPrefix+"YnJvd3Nlcg")
	if err != nil {
		t.Fatalf("websocket through the proxy: %v (response %v)", err, resp)
	}
	defer conn.Close()
	if got := conn.Subprotocol(); got != plainProtocol {
		t.Errorf("subprotocol %q, want %s", got, plainProtocol)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp == "" {
		t.Error("the 101 answer lacks the server's headers")
	}

	seen := api.lastRequest(t, consolePath)
	if got := seen.header.Get("Authorization"); got != "Bearer rest-token" {
		t.Errorf("kube-apiserver saw Authorization %q, want the rest.Config's bearer token", got)
	}
	wantNoBrowserHeaders(t, seen)
	if seen.protoMajor != 1 {
		t.Errorf("the websocket went over HTTP/%d, want HTTP/1.1", seen.protoMajor)
	}
	if got := seen.header.Get("Sec-Websocket-Protocol"); got != plainProtocol {
		t.Errorf("kube-apiserver was offered subprotocols %q, want only %s (no token)", got, plainProtocol)
	}
	wantEcho(t, api, conn, "ls\r")
}

// wantEcho reads the console's greeting, sends msg and reads its echo: bytes go both ways.
func wantEcho(t *testing.T, api *fakeAPI, conn *websocket.Conn, msg string) {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, got, err := conn.ReadMessage(); err != nil || string(got) != "login: " {
		t.Fatalf("greeting %q, %v; want %q", got, err, "login: ")
	}
	if err := conn.WriteMessage(websocket.BinaryMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-api.received:
		if got != msg {
			t.Errorf("the console received %q, want %q", got, msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the console received nothing within 10 s")
	}
	if _, got, err := conn.ReadMessage(); err != nil || string(got) != "echo:"+msg {
		t.Fatalf("echo %q, %v; want %q", got, err, "echo:"+msg)
	}
}

func TestAnIdleWebsocketStaysOpen(t *testing.T) {
	api := newFakeAPI(t)
	const timeout = 100 * time.Millisecond
	fx := startServer(t, api.restConfig("rest-token"), func(s *Server) {
		s.headerTimeout, s.idleTimeout = timeout, timeout
	})
	conn, _, err := fx.dialWS(consolePath, http.Header{"Cookie": {fx.cookie.String()}, "Origin": {fx.base}}, plainProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The console stays idle while three idle connections opened after it, one after the
	// other, are each cut by the server's timeouts: it has outlived at least three of them.
	for range 3 {
		waitUntilTheServerCutsAnIdleConnection(t, fx.host)
	}
	wantEcho(t, api, conn, "still there")
}

// waitUntilTheServerCutsAnIdleConnection opens a connection that sends nothing and waits
// (up to 10 s) until the server closes it.
func waitUntilTheServerCutsAnIdleConnection(t *testing.T, host string) {
	t.Helper()
	idle, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := idle.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an idle connection was not cut by the server within 10 s (read: %v)", err)
	}
}

func TestShutdownEndsProxiedWebsocketsAndWatches(t *testing.T) {
	api := newFakeAPI(t)
	s, err := New(Options{REST: api.restConfig("rest-token"), Assets: testAssets()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	fx := &fixture{srv: s, host: s.listener.Addr().String(), cookie: &http.Cookie{Name: s.cookieName(), Value: s.secret}}
	fx.base = "http://" + fx.host
	conn, _, err := fx.dialWS(consolePath, http.Header{"Cookie": {fx.cookie.String()}, "Origin": {fx.base}}, plainProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, err := http.NewRequest(http.MethodGet, fx.base+"/api/v1/watch/namespaces", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", fx.cookie.String())
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The watch's first event arrives while the watch stays open: the proxy flushes.
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != `{"type":"ADDED"}`+"\n" {
		t.Fatalf("watch event %q, %v", line, err)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s")
	}
	if d := time.Since(start); d >= shutdownGrace {
		t.Errorf("shutting down took %s: the watch held it", d)
	}
	// The websocket ends: reads fail once the proxy has closed it.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := conn.ReadMessage()
		return err != nil, nil
	})
	if err != nil {
		t.Fatal("the websocket stayed open after shutdown")
	}
}

func TestAnUnreachableKubeAPIServerIsA502WithTheReason(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.restConfig("rest-token")
	api.Close()
	fx := startServer(t, cfg, nil)
	resp, body := fx.do(t, http.MethodGet, "/api/v1/namespaces", fx.withCookie(nil))
	wantStatus(t, resp, body, http.StatusBadGateway, "kube-apiserver could not be asked")
}
