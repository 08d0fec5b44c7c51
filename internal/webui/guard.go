package webui

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// tokenParam is the query parameter of the printed URL that carries the per-run secret.
const tokenParam = "token"

// ServeHTTP answers one request after the checks that keep the server from acting for anyone
// but the user's browser, in this order:
//   - Host must name this server on loopback (no DNS rebinding);
//   - the path must be clean (no way out of /api and /apis to the rest of kube-apiserver);
//   - Origin, when present, must be this server; websockets and requests other than GET and
//     HEAD must carry it (no cross-site requests or websockets);
//   - the printed URL's token is exchanged for a cookie;
//   - Sec-Fetch-Site, when present, must say same-origin or none (another port of this machine
//     is the same site to a browser, which then sends it the SameSite cookie);
//   - the cookie must hold the secret.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if !s.allowedHosts[host] {
		setSecurityHeaders(w.Header(), "")
		s.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's: open the URL vireoctl ui printed (127.0.0.1, localhost or [::1] with port %d)", r.Host, s.port))
		return
	}
	setSecurityHeaders(w.Header(), host)
	if !cleanPath(r.URL.Path) {
		s.refuse(w, r, http.StatusBadRequest, "the path is not clean (it has //, /./ or /../)")
		return
	}
	if msg := s.checkOrigin(r); msg != "" {
		s.refuse(w, r, http.StatusForbidden, msg)
		return
	}
	if r.URL.Query().Has(tokenParam) {
		s.exchangeToken(w, r)
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		s.refuse(w, r, http.StatusForbidden, fmt.Sprintf("the browser says this request comes from another site (Sec-Fetch-Site: %s): open the web console's URL directly", site))
		return
	}
	if !s.hasSessionCookie(r) {
		s.refuse(w, r, http.StatusUnauthorized, "this web console needs the URL with its token that vireoctl ui printed: open that URL in this browser")
		return
	}
	s.route(w, r)
}

// route sends a request that passed the checks to the proxy (/api and /apis) or to the assets.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	toAPI := p == "/api" || p == "/apis" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/")
	switch {
	case hasUpgrade(r) && !isWebsocket(r):
		s.refuse(w, r, http.StatusBadRequest, "only websocket upgrades (GET) are proxied")
	case isWebsocket(r) && !toAPI:
		s.refuse(w, r, http.StatusBadRequest, "websockets are proxied only under /api and /apis")
	case toAPI && !proxiedMethods[r.Method]:
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE")
		s.refuse(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" is not proxied")
	case toAPI:
		s.api.ServeHTTP(w, r)
	default:
		s.static.ServeHTTP(w, r)
	}
}

// proxiedMethods are the methods Kubernetes clients use.
var proxiedMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true,
	http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true,
}

// cookieName is the cookie holding the secret. Browsers send a 127.0.0.1 cookie to every port
// of 127.0.0.1, so the name carries the port: two consoles must not overwrite each other's.
func (s *Server) cookieName() string {
	return "vireo-ui-" + strconv.Itoa(s.port)
}

// exchangeToken answers the printed URL: with the right token, it sets the session cookie and
// redirects to the same URL without the token, so the secret leaves the address bar and history.
func (s *Server) exchangeToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.refuse(w, r, http.StatusMethodNotAllowed, "the token is taken only from the printed URL, opened with GET")
		return
	}
	q := r.URL.Query()
	if tokens := q[tokenParam]; len(tokens) != 1 || !s.secretMatches(tokens[0]) {
		s.refuse(w, r, http.StatusForbidden, "the URL's token is not this run's: open the URL this run of vireoctl ui printed (each run has a new one)")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     s.cookieName(),
		Value:    s.secret,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	q.Del(tokenParam)
	target := r.URL.EscapedPath()
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// hasSessionCookie says whether the request carries the session cookie with the secret.
func (s *Server) hasSessionCookie(r *http.Request) bool {
	name := s.cookieName()
	for _, c := range r.Cookies() {
		if c.Name == name && s.secretMatches(c.Value) {
			return true
		}
	}
	return false
}

// secretMatches compares v with the secret in constant time.
func (s *Server) secretMatches(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.secret)) == 1
}

// checkOrigin says what is wrong with the request's Origin, or "". Browsers send Origin with
// every websocket and every cross-origin or non-GET request, so one that is missing there is
// not a browser on this page.
func (s *Server) checkOrigin(r *http.Request) string {
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) > 1:
		return "more than one Origin header"
	case len(origins) == 0 && hasUpgrade(r):
		return "a websocket needs an Origin header: only the web console's page may open one"
	case len(origins) == 0 && r.Method != http.MethodGet && r.Method != http.MethodHead:
		return "a " + r.Method + " needs an Origin header: only the web console's page may send one"
	case len(origins) == 0:
		return ""
	}
	if host, ok := strings.CutPrefix(strings.ToLower(origins[0]), "http://"); ok && s.allowedHosts[host] {
		return ""
	}
	return fmt.Sprintf("Origin %q is not this server's: requests from other pages are refused", origins[0])
}

// hasUpgrade says whether the request asks to switch protocols.
func hasUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || headerHasToken(r.Header, "Connection", "upgrade")
}

// isWebsocket says whether the request is a websocket handshake.
func isWebsocket(r *http.Request) bool {
	return r.Method == http.MethodGet && headerHasToken(r.Header, "Connection", "upgrade") &&
		strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// headerHasToken says whether the comma-separated values of header name hold token (in any case).
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// cleanPath says whether p is absolute and has no empty, "." or ".." segments (a trailing slash
// is allowed). The proxy forwards only clean paths, so /api/../version cannot reach /version.
func cleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	want := path.Clean(p)
	if strings.HasSuffix(p, "/") && want != "/" {
		want += "/"
	}
	return want == p
}

// refuse answers a refused request with a short plain-text reason.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, reason string) {
	// The query is left out: it may hold the token.
	klog.V(1).InfoS("Refused a request", "method", r.Method, "path", r.URL.Path, "status", code, "reason", reason)
	http.Error(w, "vireoctl ui: "+reason, code)
}

// setSecurityHeaders sets the headers every response carries. host is the checked Host of the
// request ("" when it was refused): the CSP names its websocket origin, which not every browser
// counts as 'self'.
func setSecurityHeaders(h http.Header, host string) {
	connect := "'self'"
	if host != "" {
		connect += " ws://" + host
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; "+
		"img-src 'self' data: blob:; connect-src "+connect+"; object-src 'none'; base-uri 'none'; "+
		"form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Other pages, including those on other ports of this machine, may not load these responses.
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
