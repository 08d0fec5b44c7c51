package importer

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fastSource is an HTTPSource that retries at once, for tests.
func fastSource(url string) *HTTPSource {
	return &HTTPSource{URL: url, Retries: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
}

// server serves data on loopback through handler and records each request's Range header.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string
}

func newServer(t *testing.T, handler func(s *server, w http.ResponseWriter, r *http.Request)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		s.mu.Unlock()
		handler(s, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the Range headers of the requests so far ("" for none).
func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

// dropAfter answers 200 with the full Content-Length but sends only the first n bytes of
// data, then closes the connection.
func dropAfter(t *testing.T, w http.ResponseWriter, data []byte, n int) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: \"v1\"\r\nContent-Type: application/octet-stream\r\n\r\n", len(data))
	buf.Write(data[:n])
	buf.Flush()
}

func readFixture(t *testing.T, name string) []byte {
	data, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestHTTPImport(t *testing.T) {
	data := readFixture(t, "qcow2.gz")
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		if !ok || user != "user" || password != "secret" || r.Header.Get("X-Token") != "a: b" || r.Host != "images.example" {
			http.Error(w, "who are you", http.StatusForbidden)
			return
		}
		if r.Header.Get("Accept-Encoding") == "gzip" {
			t.Error("the client asked for a compressed transfer")
		}
		w.Write(data)
	})
	src := fastSource(srv.URL + "/disk.qcow2.gz")
	src.Username, src.Password = "user", "secret"
	src.Headers = []string{"X-Token: a: b", "Host: images.example"}
	o := options(t, src)
	res, err := Import(testContext(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatQCOW2 || res.Compression != CompressionGzip || res.Received != int64(len(data)) {
		t.Errorf("result %+v", res)
	}
	checkDisk(t, o, rawContent())
}

func TestHTTPNotFound(t *testing.T) {
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	o := options(t, fastSource(srv.URL+"/missing.img"))
	err := importFails(t, o, nil, srv.URL+"/missing.img", "404 Not Found")
	if IsTransient(err) {
		t.Error("a 404 is transient")
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("the server saw %d requests; a 404 is not retried", n)
	}
}

func TestHTTPServerErrors(t *testing.T) {
	data := readFixture(t, "raw.zst")
	var failures atomic.Int32
	failures.Store(2)
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		if failures.Add(-1) >= 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(data)
	})
	o := options(t, fastSource(srv.URL))
	if _, err := Import(testContext(t), o); err != nil {
		t.Fatal(err)
	}
	checkDisk(t, o, rawContent())

	failures.Store(100)
	o = options(t, fastSource(srv.URL))
	err := importFails(t, o, nil, "503 Service Unavailable", "gave up after 3 retries")
	if !IsTransient(err) {
		t.Error("a server that keeps answering 503 is not transient")
	}
}

func TestHTTPResume(t *testing.T) {
	data := readFixture(t, "raw.xz")
	var dropped atomic.Bool
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		if !dropped.Swap(true) {
			dropAfter(t, w, data, len(data)/2)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	})
	o := options(t, fastSource(srv.URL))
	res, err := Import(testContext(t), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", fmt.Sprintf("bytes=%d-", len(data)/2)}
	if got := srv.requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the server saw Range headers %q, want %q", got, want)
	}
	if res.Received != int64(len(data)) {
		t.Errorf("received %d bytes, want %d", res.Received, len(data))
	}
	checkDisk(t, o, rawContent())
}

func TestHTTPResumeWithChecksum(t *testing.T) {
	data := readFixture(t, "raw.gz")
	sum := "sha256:" + sha256Hex(data)
	var drops atomic.Int32
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		// Every answer breaks off after at most another quarter of the image.
		start := 0
		if r.Header.Get("Range") != "" {
			fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-", &start)
		}
		if end := start + len(data)/4 + 1; end < len(data) {
			drops.Add(1)
			conn, buf, _ := w.(http.Hijacker).Hijack()
			defer conn.Close()
			if start == 0 {
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(data))
			} else {
				fmt.Fprintf(buf, "HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\nContent-Range: bytes %d-%d/%d\r\n\r\n",
					len(data)-start, start, len(data)-1, len(data))
			}
			buf.Write(data[start:end])
			buf.Flush()
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	})
	o := options(t, fastSource(srv.URL))
	o.Checksum = sum
	if _, err := Import(testContext(t), o); err != nil {
		t.Fatal(err)
	}
	if drops.Load() != 3 {
		t.Errorf("the server dropped %d connections, want 3", drops.Load())
	}
	checkDisk(t, o, rawContent())
}

func TestHTTPNoRanges(t *testing.T) {
	data := readFixture(t, "raw.gz")
	var dropped atomic.Bool
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		if !dropped.Swap(true) {
			dropAfter(t, w, data, len(data)/2)
			return
		}
		w.Write(data) // ignores Range
	})
	o := options(t, fastSource(srv.URL))
	err := importFails(t, o, nil,
		fmt.Sprintf("truncated: got %d of %d bytes from %s", len(data)/2, len(data), srv.URL),
		"does not support range requests")
	if !IsTransient(err) {
		t.Error("a lost connection is not transient")
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("the server saw %d requests, want 2: resuming where ranges are not supported is not retried", n)
	}
}

func TestHTTPTruncated(t *testing.T) {
	data := readFixture(t, "raw")
	srv := newServer(t, func(s *server, w http.ResponseWriter, r *http.Request) {
		// Always 1 MiB less than promised: resuming (206) gets nothing more.
		if r.Header.Get("Range") == "" {
			dropAfter(t, w, data, len(data)-1<<20)
			return
		}
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 206 Partial Content\r\nContent-Length: %d\r\nContent-Range: bytes %d-%d/%d\r\n\r\n",
			1<<20, len(data)-1<<20, len(data)-1, len(data))
		buf.Flush()
	})
	o := options(t, fastSource(srv.URL))
	importFails(t, o, nil, fmt.Sprintf("truncated: got %d of %d bytes", len(data)-1<<20, len(data)), "gave up after 3 retries")
	if n := len(srv.requests()); n != 4 {
		t.Errorf("the server saw %d requests, want 1 + 3 retries", n)
	}
}

func TestHTTPTLS(t *testing.T) {
	data := readFixture(t, "raw.gz")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	t.Run("untrusted", func(t *testing.T) {
		o := options(t, fastSource(srv.URL))
		err := importFails(t, o, nil, "certificate")
		if IsTransient(err) {
			t.Error("an untrusted certificate is transient")
		}
	})
	t.Run("ca bundle", func(t *testing.T) {
		src := fastSource(srv.URL)
		src.CABundle = ca
		o := options(t, src)
		if _, err := Import(testContext(t), o); err != nil {
			t.Fatal(err)
		}
		checkDisk(t, o, rawContent())
	})
	t.Run("insecure", func(t *testing.T) {
		src := fastSource(srv.URL)
		src.InsecureSkipVerify = true
		o := options(t, src)
		if _, err := Import(testContext(t), o); err != nil {
			t.Fatal(err)
		}
		checkDisk(t, o, rawContent())
	})
	t.Run("bad bundle", func(t *testing.T) {
		src := fastSource(srv.URL)
		src.CABundle = []byte("not a certificate")
		importFails(t, options(t, src), nil, "CA bundle")
	})
}

func TestHTTPValidation(t *testing.T) {
	for _, src := range []*HTTPSource{
		{URL: "ftp://example.com/disk.img"},
		{URL: "https:///disk.img"},
		{URL: "http://example.com/disk.img", Headers: []string{"no colon"}},
		{URL: "http://example.com/disk.img", Headers: []string{"Bad Name: x"}},
	} {
		o := options(t, src)
		_, err := Import(testContext(t), o)
		if err == nil || IsTransient(err) {
			t.Errorf("%+v: error %v, want a permanent one", src, err)
		}
		checkOnly(t, o.TargetDir)
	}
	// A header's value, which may be a secret, is never in a message.
	src := &HTTPSource{URL: "http://example.com/", Headers: []string{"Authorization: Bearer s3cret", "Broken s3cret"}}
	if err := src.Validate(); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v", err)
	}
}

func TestBackoff(t *testing.T) {
	s := &HTTPSource{}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := s.backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if s.retries() != DefaultHTTPRetries || (&HTTPSource{Retries: -1}).retries() != 0 {
		t.Error("retries defaults")
	}
}
