package webui

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/client-go/rest"
)

func TestListeningOnANonLoopbackAddressIsRefused(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	for _, address := range []string{"0.0.0.0", "::", "192.0.2.10", "10.0.0.1", "127.0.0.2", "example.com", "127.0.0.1:8080", "[::1]"} {
		s, err := New(Options{REST: cfg, Assets: testAssets(), Address: address})
		if err == nil {
			s.Close()
			t.Errorf("--address %q: the server started", address)
			continue
		}
		if !strings.Contains(err.Error(), "loopback only") || !strings.Contains(err.Error(), address) {
			t.Errorf("--address %q: error %q does not name the address and say loopback only", address, err)
		}
	}
}

func TestItListensOnLoopback(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	for address, want := range map[string]string{"": "127.0.0.1", "127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "::1": "::1"} {
		s, err := New(Options{REST: cfg, Assets: testAssets(), Address: address})
		if err != nil {
			if address == "::1" && strings.Contains(err.Error(), "listening") {
				t.Logf("no IPv6 loopback here: %v", err)
				continue
			}
			t.Fatalf("--address %q: %v", address, err)
		}
		got := s.listener.Addr().(*net.TCPAddr)
		s.Close()
		if !got.IP.Equal(net.ParseIP(want)) || got.Port == 0 {
			t.Errorf("--address %q: listened on %s, want %s and a free port", address, got, want)
		}
		if address == "::1" && !strings.HasPrefix(s.URL(), "http://[::1]:") {
			t.Errorf("URL %s, want http://[::1]:PORT/...", s.URL())
		}
	}
}

func TestBadOptionsAreRefusedWithTheReason(t *testing.T) {
	good := &rest.Config{Host: "https://127.0.0.1:6443"}
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"no config", Options{Assets: testAssets()}, "no client configuration"},
		{"no assets", Options{REST: good}, "no assets"},
		{"no server", Options{REST: &rest.Config{}, Assets: testAssets()}, "names no server"},
		{"no index", Options{REST: good, Assets: fstest.MapFS{"app.js": {}}}, "no index.html"},
		{"negative port", Options{REST: good, Assets: testAssets(), Port: -1}, "--port -1"},
		{"port too high", Options{REST: good, Assets: testAssets(), Port: 70000}, "--port 70000"},
		{"exec and auth provider", Options{REST: &rest.Config{Host: "https://x", ExecProvider: execConfig("/bin/true"), AuthProvider: authProvider()}, Assets: testAssets()}, "cannot be used in combination"},
	} {
		s, err := New(c.opts)
		if err == nil {
			s.Close()
			t.Errorf("%s: New succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
		}
	}
}

func TestServeEndsOnItsContextAndClosesTheListener(t *testing.T) {
	s, err := New(Options{REST: &rest.Config{Host: "https://127.0.0.1:6443"}, Assets: testAssets()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v, want nil after its context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s of its context's end")
	}
	conn, err := net.Dial("tcp", s.listener.Addr().String())
	if err == nil {
		conn.Close()
		t.Fatal("the port still accepts connections after Serve returned")
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("dial after Serve: %v", err)
	}
}
