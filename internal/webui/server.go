// Package webui is the local web server of `vireoctl ui`: it serves the web console's static
// assets and proxies the console's API calls (and its console and VNC websockets) to
// kube-apiserver with the user's own kubeconfig credentials, so RBAC applies as it does to
// kubectl. Because it acts with those credentials, it listens on loopback only and answers only a
// browser that holds the per-run secret printed in its URL (Server.ServeHTTP lists the checks).
package webui

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// Options is what a Server needs: whose credentials to act with, what to serve and where.
type Options struct {
	// REST is the user's client configuration (kubeconfig flags, exec and auth-provider plugins,
	// --as included); requests to /api and /apis are sent to its Host with its credentials.
	REST *rest.Config
	// Assets holds the single-page UI: index.html at its root and the files it loads.
	Assets fs.FS
	// Address is the loopback address to listen on: 127.0.0.1 (the default when empty), ::1 or
	// localhost (which means 127.0.0.1).
	Address string
	// Port is the TCP port to listen on; 0 picks a free one.
	Port int
}

// Server is a running web console server: its listener is open from New on, and Serve answers
// requests until its context ends.
type Server struct {
	listener net.Listener
	port     int
	// listenHost is the host of the printed URL: 127.0.0.1 or [::1].
	listenHost string
	// secret is the per-run token the URL carries and the cookie then holds.
	secret string
	// allowedHosts are the Host values (and, with http://, the Origins) accepted.
	allowedHosts map[string]bool
	api          *apiProxy
	static       *staticHandler

	// headerTimeout and idleTimeout bound a request's headers and a kept-alive connection
	// between requests; neither applies to a proxied websocket once it is switched.
	headerTimeout time.Duration
	idleTimeout   time.Duration
}

// shutdownGrace is how long Serve waits for requests in flight once its context has ended.
const shutdownGrace = 5 * time.Second

// New checks the options, builds the transports to kube-apiserver and opens the listener. Close
// it with Serve (which closes it when done) or Close.
func New(opts Options) (*Server, error) {
	if opts.REST == nil {
		return nil, errors.New("webui: no client configuration (rest.Config) given")
	}
	if opts.Assets == nil {
		return nil, errors.New("webui: no assets given")
	}
	ip, err := loopbackIP(opts.Address)
	if err != nil {
		return nil, err
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("--port %d: not a TCP port (0 picks a free one, else 1-65535)", opts.Port)
	}
	static, err := newStaticHandler(opts.Assets)
	if err != nil {
		return nil, err
	}
	api, err := newAPIProxy(opts.REST)
	if err != nil {
		return nil, err
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("listening on %s port %d: %w", ip, opts.Port, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	s := &Server{
		listener:      l,
		port:          port,
		listenHost:    hostForURL(ip),
		secret:        secret,
		allowedHosts:  allowedHosts(port),
		api:           api,
		static:        static,
		headerTimeout: 10 * time.Second,
		idleTimeout:   2 * time.Minute,
	}
	return s, nil
}

// loopbackIP is the address to listen on, refusing any that is not 127.0.0.1 or ::1: the server
// acts with the user's credentials and must not be reachable from another machine.
func loopbackIP(address string) (net.IP, error) {
	switch address {
	case "", "localhost":
		return net.IPv4(127, 0, 0, 1), nil
	}
	ip := net.ParseIP(address)
	if ip == nil || !(ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)) {
		return nil, fmt.Errorf("--address %q: the web console listens on loopback only (127.0.0.1, ::1 or localhost), "+
			"as it acts with your credentials; to reach it from elsewhere use an SSH tunnel", address)
	}
	return ip, nil
}

// hostForURL is ip as the host part of a URL.
func hostForURL(ip net.IP) string {
	if ip.To4() == nil {
		return "[" + ip.String() + "]"
	}
	return ip.String()
}

// allowedHosts are the Host header values a browser sends for this server: only loopback names
// with the port actually listened on, so a DNS name rebound to 127.0.0.1 is refused.
func allowedHosts(port int) map[string]bool {
	p := strconv.Itoa(port)
	return map[string]bool{
		"127.0.0.1:" + p: true,
		"localhost:" + p: true,
		"[::1]:" + p:     true,
	}
}

// newSecret is 32 random bytes, base64url without padding.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webui: making the per-run secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// URL is the address to open in a browser, carrying the per-run secret. Whoever has it can act
// with the user's credentials until the server stops: print it only to the user.
func (s *Server) URL() string {
	return fmt.Sprintf("http://%s:%d/?%s=%s", s.listenHost, s.port, tokenParam, s.secret)
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int {
	return s.port
}

// Serve answers requests until ctx ends, then shuts down: it closes the listener, ends proxied
// watches and websockets, and waits up to shutdownGrace for other requests in flight. It returns
// nil after such a shutdown.
func (s *Server) Serve(ctx context.Context) error {
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler: s,
		// No ReadTimeout or WriteTimeout: they would stay set on a hijacked websocket and end
		// an idle console. A request's headers must come in time, though.
		ReadHeaderTimeout: s.headerTimeout,
		IdleTimeout:       s.idleTimeout,
		// Requests' contexts derive from base, so cancelling it ends the proxied streams,
		// which http.Server.Shutdown neither tracks (websockets) nor waits out (watches).
		BaseContext: func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(s.listener) }()
	select {
	case err := <-served:
		return fmt.Errorf("web console server: %w", err)
	case <-ctx.Done():
	}
	cancelBase()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	<-served
	if err != nil {
		return fmt.Errorf("web console server: shutting down: %w", err)
	}
	return nil
}

// Close closes the listener of a server that is not serving.
func (s *Server) Close() error {
	return s.listener.Close()
}
