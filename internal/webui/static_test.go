package webui

import (
	"net/http"
	"strings"
	"testing"
)

func TestUnknownPathsServeTheIndexAndFilesThemselves(t *testing.T) {
	fx := startServer(t, newFakeAPI(t).restConfig("rest-token"), nil)
	for _, c := range []struct {
		path, body, contentType, cacheControl string
	}{
		{"/", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/index.html", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/vms/default/demo", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/vms/default/my.vm", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/static/empty/", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/static", testIndex, "text/html; charset=utf-8", "no-store"},
		{"/app.js", "console.log('app');", "text/javascript; charset=utf-8", "no-cache"},
		{"/static/style.css", "body{}", "text/css; charset=utf-8", "no-cache"},
	} {
		resp, body := fx.do(t, http.MethodGet, c.path, fx.withCookie(nil))
		wantStatus(t, resp, body, http.StatusOK, "")
		if body != c.body {
			t.Errorf("GET %s: body %q, want %q", c.path, body, c.body)
		}
		if got := resp.Header.Get("Content-Type"); got != c.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.contentType)
		}
		if got := resp.Header.Values("Cache-Control"); len(got) != 1 || got[0] != c.cacheControl {
			t.Errorf("GET %s: Cache-Control %q, want %q", c.path, got, c.cacheControl)
		}
	}
	resp, body := fx.do(t, http.MethodHead, "/", fx.withCookie(nil))
	wantStatus(t, resp, body, http.StatusOK, "")
	resp, body = fx.do(t, http.MethodPost, "/app.js", fx.withCookie(map[string]string{"Origin": fx.base}))
	wantStatus(t, resp, body, http.StatusMethodNotAllowed, "not allowed here")
}

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	fx := startServer(t, newFakeAPI(t).restConfig("rest-token"), nil)
	for _, c := range []struct {
		name   string
		path   string
		header map[string]string
	}{
		{"index", "/", fx.withCookie(nil)},
		{"asset", "/app.js", fx.withCookie(nil)},
		{"API", "/api/v1/namespaces", fx.withCookie(nil)},
		{"refusal", "/", nil},
		{"wrong host", "/", fx.withCookie(map[string]string{"Host": "evil.example"})},
	} {
		resp, _ := fx.do(t, http.MethodGet, c.path, c.header)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self'", "img-src 'self' data: blob:", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", c.name, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q allows unsafe sources", c.name, csp)
		}
		for name, want := range map[string]string{
			"X-Content-Type-Options":       "nosniff",
			"Referrer-Policy":              "no-referrer",
			"X-Frame-Options":              "DENY",
			"Cross-Origin-Resource-Policy": "same-origin",
		} {
			if got := resp.Header.Get(name); got != want {
				t.Errorf("%s: %s %q, want %q", c.name, name, got, want)
			}
		}
	}
	resp, _ := fx.do(t, http.MethodGet, "/", fx.withCookie(nil))
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' ws://"+fx.host+";") {
		t.Errorf("CSP %q does not allow the page's own websockets (ws://%s)", csp, fx.host)
	}
}
