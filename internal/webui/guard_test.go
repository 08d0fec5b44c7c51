package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestWithoutTheTokenOrCookieRequestsAreRefused(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	for _, path := range []string{"/", "/app.js", "/api/v1/namespaces", "/vms/default/demo"} {
		resp, body := fx.do(t, http.MethodGet, path, nil)
		wantStatus(t, resp, body, http.StatusUnauthorized, "needs the URL with its token")
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("GET %s refused with Content-Type %q, want text/plain", path, ct)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d requests without the cookie, want none", n)
	}
}

func TestAWrongTokenIsRefusedAndSetsNoCookie(t *testing.T) {
	fx := startServer(t, newFakeAPI(t).restConfig("rest-token"), nil)
	for _, query := range []string{"?token=wrong", "?token=", "?token=" + fx.srv.secret + "x", "?token=" + fx.srv.secret + "&token=" + fx.srv.secret} {
		resp, body := fx.do(t, http.MethodGet, "/"+query, nil)
		wantStatus(t, resp, body, http.StatusForbidden, "not this run's")
		if c := resp.Header.Values("Set-Cookie"); len(c) != 0 {
			t.Errorf("%s: Set-Cookie %q on a wrong token", query, c)
		}
	}
	resp, body := fx.do(t, http.MethodGet, "/", map[string]string{"Cookie": fx.srv.cookieName() + "=wrong"})
	wantStatus(t, resp, body, http.StatusUnauthorized, "token")
}

func TestTheTokenSetsAStrictHttpOnlyCookieAndRedirectsWithoutIt(t *testing.T) {
	fx := startServer(t, newFakeAPI(t).restConfig("rest-token"), nil)
	u, err := url.Parse(fx.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != fx.host || u.Path != "/" || len(u.Query().Get(tokenParam)) != 43 {
		t.Fatalf("URL %s: want http://%s/?token=<43 characters of base64url>", fx.srv.URL(), fx.host)
	}
	resp, body := fx.do(t, http.MethodGet, "/vms/default?view=list&token="+fx.srv.secret, nil)
	wantStatus(t, resp, body, http.StatusSeeOther, "")
	if loc := resp.Header.Get("Location"); loc != "/vms/default?view=list" {
		t.Errorf("redirect to %q, want /vms/default?view=list (the same URL without the token)", loc)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v, want one", cookies)
	}
	c := cookies[0]
	if c.Name != fx.srv.cookieName() || c.Value != fx.srv.secret || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %s, want %s=<the secret>; Path=/; HttpOnly; SameSite=Strict", c, fx.srv.cookieName())
	}
	raw := resp.Header.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(raw, attr) {
			t.Errorf("Set-Cookie %q lacks %s", raw, attr)
		}
	}
	resp, body = fx.do(t, http.MethodGet, "/vms/default?view=list", map[string]string{"Cookie": c.Name + "=" + c.Value})
	wantStatus(t, resp, body, http.StatusOK, "test console")
}

func TestTheTokenIsTakenOnlyWithGET(t *testing.T) {
	fx := startServer(t, newFakeAPI(t).restConfig("rest-token"), nil)
	origin := map[string]string{"Origin": fx.base}
	resp, body := fx.do(t, http.MethodPost, "/?token="+fx.srv.secret, origin)
	wantStatus(t, resp, body, http.StatusMethodNotAllowed, "only from the printed URL")
}

func TestAWrongHostIsRefusedEvenWithTheCookie(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	port := strconv.Itoa(fx.srv.Port())
	otherPort := strconv.Itoa(fx.srv.Port()%65535 + 1)
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:" + otherPort, "127.0.0.1", "localhost.evil.example:" + port} {
		for _, path := range []string{"/", "/api/v1/namespaces", "/?token=" + fx.srv.secret} {
			resp, body := fx.do(t, http.MethodGet, path, fx.withCookie(map[string]string{"Host": host}))
			wantStatus(t, resp, body, http.StatusForbidden, "is not this server's")
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d requests with a foreign Host, want none", n)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		resp, body := fx.do(t, http.MethodGet, "/", fx.withCookie(map[string]string{"Host": host}))
		wantStatus(t, resp, body, http.StatusOK, "test console")
	}
}

func TestCrossOriginRequestsAreRefused(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	otherPort := "http://127.0.0.1:" + strconv.Itoa(fx.srv.Port()%65535+1)
	for _, c := range []struct {
		method string
		header map[string]string
		want   string
	}{
		{http.MethodPost, map[string]string{"Origin": "http://evil.example"}, "is not this server's"},
		{http.MethodPost, map[string]string{"Origin": otherPort}, "is not this server's"},
		{http.MethodPost, map[string]string{"Origin": "null"}, "is not this server's"},
		{http.MethodPost, map[string]string{"Origin": "https://" + fx.host}, "is not this server's"},
		{http.MethodPost, nil, "needs an Origin header"},
		{http.MethodDelete, nil, "needs an Origin header"},
		{http.MethodGet, map[string]string{"Origin": "http://evil.example"}, "is not this server's"},
		// A page on another port of this machine is the same site: its requests carry the
		// SameSite cookie, and Sec-Fetch-Site says where they come from.
		{http.MethodGet, map[string]string{"Sec-Fetch-Site": "same-site"}, "another site"},
		{http.MethodGet, map[string]string{"Sec-Fetch-Site": "cross-site"}, "another site"},
	} {
		resp, body := fx.do(t, c.method, "/api/v1/namespaces", fx.withCookie(c.header))
		wantStatus(t, resp, body, http.StatusForbidden, c.want)
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d cross-origin requests, want none", n)
	}
	for _, origin := range []string{fx.base, "http://localhost:" + strconv.Itoa(fx.srv.Port())} {
		resp, body := fx.do(t, http.MethodPost, "/api/v1/namespaces", fx.withCookie(map[string]string{"Origin": origin, "Sec-Fetch-Site": "same-origin"}))
		wantStatus(t, resp, body, http.StatusCreated, "NamespaceList")
	}
}

func TestWebsocketsFromAnotherOriginOrWithoutOneAreRefused(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	for _, origin := range []string{"", "http://evil.example", "http://127.0.0.1:" + strconv.Itoa(fx.srv.Port()%65535+1)} {
		header := http.Header{"Cookie": {fx.cookie.String()}}
		if origin != "" {
			header.Set("Origin", origin)
		}
		conn, resp, err := fx.dialWS(consolePath, header, plainProtocol)
		if err == nil {
			conn.Close()
			t.Fatalf("Origin %q: the websocket was opened", origin)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("Origin %q: %v (response %v), want 403", origin, err, resp)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d refused websockets, want none", n)
	}
}

func TestOnlyWebsocketUpgradesUnderTheAPIAreAllowed(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	origin := map[string]string{"Origin": fx.base}
	spdy := fx.withCookie(map[string]string{"Origin": fx.base, "Connection": "Upgrade", "Upgrade": "SPDY/3.1"})
	resp, body := fx.do(t, http.MethodPost, "/api/v1/namespaces/default/pods/p/exec", spdy)
	wantStatus(t, resp, body, http.StatusBadRequest, "only websocket upgrades")
	header := http.Header{"Cookie": {fx.cookie.String()}, "Origin": {origin["Origin"]}}
	conn, resp2, err := fx.dialWS("/ws", header)
	if err == nil {
		conn.Close()
		t.Fatal("a websocket outside /api and /apis was opened")
	}
	if resp2 == nil || resp2.StatusCode != http.StatusBadRequest {
		t.Fatalf("websocket to /ws: %v, want 400", err)
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d requests, want none", n)
	}
}

func TestPathsOutsideAPIAndAPIsNeverReachKubeAPIServer(t *testing.T) {
	api := newFakeAPI(t)
	fx := startServer(t, api.restConfig("rest-token"), nil)
	for _, path := range []string{"/api/../version", "/api/%2e%2e/version", "/apis/..%2Fversion", "/api//v1/namespaces", "/apis/./x"} {
		resp, body := fx.do(t, http.MethodGet, path, fx.withCookie(nil))
		wantStatus(t, resp, body, http.StatusBadRequest, "not clean")
	}
	for _, path := range []string{"/version", "/openapi/v2", "/healthz", "/apiary", "/metrics"} {
		resp, body := fx.do(t, http.MethodGet, path, fx.withCookie(nil))
		wantStatus(t, resp, body, http.StatusOK, "test console")
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("kube-apiserver saw %d requests outside /api and /apis: %+v", n, api.requests())
	}
}

func TestCleanPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/api": true, "/api/": true, "/api/v1/namespaces": true, "/a.b/c..d": true,
		"": false, "api": false, "//": false, "/api//v1": false, "/api/./v1": false, "/api/..": false, "/..": false, "*": false,
	} {
		if got := cleanPath(p); got != want {
			t.Errorf("cleanPath(%q) = %v, want %v", p, got, want)
		}
	}
}
