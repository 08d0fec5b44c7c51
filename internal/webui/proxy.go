package webui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// apiProxy forwards /api and /apis to kube-apiserver with the user's credentials. Both of its
// transports come from client-go (rest.TransportFor), so client certificates, bearer tokens,
// exec and auth-provider plugins and --as work as they do for kubectl.
type apiProxy struct {
	// plain carries ordinary requests and watches, over HTTP/2 where kube-apiserver offers it.
	plain *httputil.ReverseProxy
	// upgrade carries websockets. kube-apiserver switches protocols only over HTTP/1.1, so its
	// TLS offers only http/1.1; its round tripper is client-go's, whose wrappers hand the 101
	// response through untouched, so its body is the writable connection ReverseProxy splices.
	upgrade *httputil.ReverseProxy
}

// newAPIProxy builds the proxy to cfg's kube-apiserver.
func newAPIProxy(cfg *rest.Config) (*apiProxy, error) {
	if cfg.Host == "" {
		return nil, errors.New("webui: the kubeconfig names no server (rest.Config.Host is empty)")
	}
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("webui: kube-apiserver address %q: %w", cfg.Host, err)
	}
	plain, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("webui: client transport for %s: %w", cfg.Host, err)
	}
	http1 := rest.CopyConfig(cfg)
	http1.NextProtos = []string{"http/1.1"}
	upgrade, err := rest.TransportFor(http1)
	if err != nil {
		return nil, fmt.Errorf("webui: HTTP/1.1 client transport for %s: %w", cfg.Host, err)
	}
	return &apiProxy{plain: newReverseProxy(target, plain), upgrade: newReverseProxy(target, upgrade)}, nil
}

// ServeHTTP forwards one request whose path and access the Server has checked.
func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isWebsocket(r) {
		p.upgrade.ServeHTTP(w, r)
		return
	}
	p.plain.ServeHTTP(w, r)
}

// newReverseProxy forwards to target through rt. ReverseProxy drops hop-by-hop and X-Forwarded
// headers itself (Rewrite is set), keeps Connection and Upgrade of a websocket handshake, and
// on a 101 answer splices the browser's connection with the one rt returned as the body.
func newReverseProxy(target *url.URL, rt http.RoundTripper) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			stripBrowserHeaders(pr.Out.Header)
		},
		Transport: rt,
		// Watches stream: each event goes to the page as it comes.
		FlushInterval:  -1,
		ModifyResponse: stripUpstreamHeaders,
		ErrorHandler:   proxyError,
	}
}

// stripBrowserHeaders removes what the page must not send to kube-apiserver: credentials of its
// own (the exec plugin's round tripper even stands aside when it finds an Authorization header),
// impersonation (the page may not act as anyone else; --as on the command line is the user's
// choice and goes in through the rest.Config), front-proxy identity headers, and its origin
// (the request to kube-apiserver is this server's, not a cross-origin browser request).
func stripBrowserHeaders(h http.Header) {
	for name := range h {
		lower := strings.ToLower(name)
		switch {
		case lower == "authorization", lower == "proxy-authorization", lower == "cookie",
			lower == "origin", lower == "referer",
			strings.HasPrefix(lower, "impersonate-"), strings.HasPrefix(lower, "x-remote-"):
			delete(h, name)
		}
	}
	stripTokenSubprotocols(h)
}

// tokenSubprotocolPrefix is the websocket subprotocol through which kube-apiserver accepts a
// bearer token; the page may not bring a token that way either.
const tokenSubprotocolPrefix = "base64url.bearer.authorization.k8s.io."

// stripTokenSubprotocols removes token-bearing subprotocols from Sec-WebSocket-Protocol.
func stripTokenSubprotocols(h http.Header) {
	values := h.Values("Sec-Websocket-Protocol")
	if len(values) == 0 {
		return
	}
	var kept []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(strings.ToLower(p), tokenSubprotocolPrefix) {
				kept = append(kept, p)
			}
		}
	}
	h.Del("Sec-Websocket-Protocol")
	if len(kept) > 0 {
		h.Set("Sec-Websocket-Protocol", strings.Join(kept, ", "))
	}
}

// ownedResponseHeaders are the response headers this server sets itself (setSecurityHeaders)
// or that must not reach the page: cookies for this origin, and WWW-Authenticate, which would
// make the browser ask for a password the proxy then strips.
var ownedResponseHeaders = map[string]bool{
	"set-cookie":                   true,
	"www-authenticate":             true,
	"content-security-policy":      true,
	"x-content-type-options":       true,
	"referrer-policy":              true,
	"x-frame-options":              true,
	"cross-origin-opener-policy":   true,
	"cross-origin-resource-policy": true,
	"cache-control":                true,
}

// stripUpstreamHeaders removes kube-apiserver's headers that would conflict with this server's
// or loosen them (CORS).
func stripUpstreamHeaders(res *http.Response) error {
	for name := range res.Header {
		lower := strings.ToLower(name)
		if ownedResponseHeaders[lower] || strings.HasPrefix(lower, "access-control-") {
			delete(res.Header, name)
		}
	}
	return nil
}

// proxyError answers a request kube-apiserver could not be asked: 502 with the reason (an
// unreachable server, a failed exec plugin), or nothing when the browser went away.
func proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	klog.ErrorS(err, "Proxying to kube-apiserver", "method", r.Method, "path", r.URL.Path)
	http.Error(w, "vireoctl ui: kube-apiserver could not be asked: "+err.Error(), http.StatusBadGateway)
}
