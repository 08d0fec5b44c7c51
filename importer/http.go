package importer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for HTTPSource's zero fields.
const (
	DefaultHTTPRetries  = 5
	DefaultBackoff      = time.Second
	DefaultMaxBackoff   = 30 * time.Second
	DefaultStallTimeout = 2 * time.Minute
)

// errNoRanges is in the error of a resumption the server did not allow. Retrying the
// resumption is pointless; retrying the whole import may succeed.
var errNoRanges = errors.New("it does not support range requests")

// HTTPSource downloads the image with GET from an http or https URL. When the connection is
// lost mid-body, it resumes with a Range request where the server allows it.
type HTTPSource struct {
	// URL is the image's http:// or https:// URL.
	URL string
	// Headers are extra request headers, each "Name: value".
	Headers []string
	// Username and Password, when Username is set, are sent as basic authentication (CDI's
	// secretRef keys accessKeyId and secretKey).
	Username, Password string
	// CABundle is PEM certificates trusted for https in addition to the system's roots.
	CABundle []byte
	// InsecureSkipVerify skips the verification of the server's certificate.
	InsecureSkipVerify bool
	// Retries bounds the attempts after a failed request or a lost connection that made no
	// progress since the previous one: 0 means DefaultHTTPRetries, negative means none.
	Retries int
	// Backoff is the wait before the first retry, doubled for each further one up to
	// MaxBackoff; 0 means DefaultBackoff and DefaultMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// StallTimeout is how long a body may send nothing before the connection counts as
	// lost; 0 means DefaultStallTimeout.
	StallTimeout time.Duration
}

// String is the URL without its password, if it has one.
func (s *HTTPSource) String() string {
	u, err := url.Parse(s.URL)
	if err != nil {
		return "the source URL"
	}
	return u.Redacted()
}

// Open sends the first request and returns the body, which resumes by itself after a lost
// connection; size is the Content-Length, or -1 when the server sends none.
func (s *HTTPSource) Open(ctx context.Context) (io.ReadCloser, int64, error) {
	d, err := s.newDownload(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := d.connect(); err != nil {
		return nil, 0, err
	}
	return d, d.total, nil
}

// Validate checks the URL and the extra headers without sending anything.
func (s *HTTPSource) Validate() error {
	if _, err := s.parseURL(); err != nil {
		return err
	}
	_, _, err := parseHeaders(s.Headers)
	return err
}

func (s *HTTPSource) parseURL() (*url.URL, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		// url.Parse's message quotes the URL, password included.
		return nil, permanentf("the source URL cannot be parsed")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, permanentf("the source URL %s is not an http:// or https:// URL", u.Redacted())
	}
	return u, nil
}

func (s *HTTPSource) newDownload(ctx context.Context) (*download, error) {
	u, err := s.parseURL()
	if err != nil {
		return nil, err
	}
	header, host, err := parseHeaders(s.Headers)
	if err != nil {
		return nil, err
	}
	client, err := s.client()
	if err != nil {
		return nil, err
	}
	return &download{src: s, ctx: ctx, client: client, url: u, header: header, host: host, total: -1}, nil
}

// client returns an HTTP client that verifies the server against the system roots plus
// CABundle and never asks for a compressed transfer (the checksum covers the bytes as stored).
func (s *HTTPSource) client() (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	tr.ResponseHeaderTimeout = time.Minute
	cfg, err := tlsConfig(s.CABundle)
	if err != nil {
		return nil, err
	}
	cfg.InsecureSkipVerify = s.InsecureSkipVerify
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}

// tlsConfig verifies servers against the system roots plus the PEM certificates of caBundle.
func tlsConfig(caBundle []byte) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, permanentf("the CA bundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

func (s *HTTPSource) retries() int {
	switch {
	case s.Retries < 0:
		return 0
	case s.Retries == 0:
		return DefaultHTTPRetries
	}
	return s.Retries
}

// backoff is the wait before retry number n (1 for the first).
func (s *HTTPSource) backoff(n int) time.Duration {
	first, max := s.Backoff, s.MaxBackoff
	if first <= 0 {
		first = DefaultBackoff
	}
	if max <= 0 {
		max = DefaultMaxBackoff
	}
	d := first
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

func (s *HTTPSource) stallTimeout() time.Duration {
	if s.StallTimeout <= 0 {
		return DefaultStallTimeout
	}
	return s.StallTimeout
}

// parseHeaders turns "Name: value" lines into a header; a Host line becomes the request's
// host. Messages never quote a header's value, which may be a secret.
func parseHeaders(lines []string) (http.Header, string, error) {
	h, host := http.Header{}, ""
	for i, line := range lines {
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !validHeaderName(name) || strings.ContainsAny(value, "\r\n") {
			return nil, "", permanentf("extra header %d is not of the form \"Name: value\"", i+1)
		}
		if strings.EqualFold(name, "Host") {
			host = value
			continue
		}
		h.Add(name, value)
	}
	return h, host, nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("!#$%&'*+-.^_`|~", c) {
			return false
		}
	}
	return true
}

// download is an HTTP body that resumes after a lost connection.
type download struct {
	src    *HTTPSource
	ctx    context.Context
	client *http.Client
	url    *url.URL
	header http.Header
	host   string

	total     int64  // Content-Length of the first answer, -1 when unknown
	offset    int64  // bytes received so far
	validator string // the first answer's strong ETag or Last-Modified, for If-Range

	body    io.ReadCloser
	cancel  context.CancelFunc // ends the current request
	stall   *time.Timer        // cancels the current request when the body sends nothing
	stalled atomic.Bool

	failures  int   // failed attempts since the last byte received
	lastErr   error // why the last attempt failed
	dropCause error // why the last connection ended early
	err       error // sticky final error
}

// connect sends the request for the bytes from offset on, retrying transient failures with
// backoff until the retries are used up.
func (d *download) connect() error {
	for {
		if d.failures > 0 {
			if d.failures > d.src.retries() {
				return fmt.Errorf("%w (gave up after %d retries)", d.lastErr, d.src.retries())
			}
			if err := sleep(d.ctx, d.src.backoff(d.failures)); err != nil {
				return err
			}
		}
		err := d.request()
		if err == nil {
			return nil
		}
		if !IsTransient(err) || errors.Is(err, errNoRanges) || d.ctx.Err() != nil {
			return err
		}
		d.failures++
		d.lastErr = err
	}
}

// request sends one GET (a range request when resuming) and keeps its body if the answer is
// usable.
func (d *download) request() error {
	ctx, cancel := context.WithCancel(d.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url.String(), nil)
	if err != nil {
		cancel()
		return permanentf("GET %s: %w", d.src, err)
	}
	req.Header = d.header.Clone()
	if d.host != "" {
		req.Host = d.host
	}
	if d.src.Username != "" {
		req.SetBasicAuth(d.src.Username, d.src.Password)
	}
	if d.offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", d.offset))
		if d.validator != "" {
			req.Header.Set("If-Range", d.validator)
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		cancel()
		return d.requestError(err)
	}
	if err := d.accept(resp); err != nil {
		resp.Body.Close()
		cancel()
		return err
	}
	d.body, d.cancel = resp.Body, cancel
	d.stalled.Store(false)
	d.stall = time.AfterFunc(d.src.stallTimeout(), func() {
		d.stalled.Store(true)
		cancel()
	})
	return nil
}

// requestError classifies a request that got no answer: a certificate the client does not
// trust is permanent, anything else is the network's.
func (d *download) requestError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return permanentf("GET %s: %w", d.src, err)
	}
	return transientf("GET %s: %w", d.src, err)
}

// accept checks an answer's status: 200 for the first request, 206 with the expected range
// for a resumption.
func (d *download) accept(resp *http.Response) error {
	code := resp.StatusCode
	switch {
	case d.offset == 0 && code == http.StatusOK:
		d.total = resp.ContentLength
		if etag := resp.Header.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
			d.validator = etag
		} else {
			d.validator = resp.Header.Get("Last-Modified")
		}
		return nil
	case d.offset > 0 && code == http.StatusPartialContent:
		return d.checkRange(resp.Header.Get("Content-Range"))
	case d.offset > 0 && code == http.StatusOK:
		return transientf("cannot resume after the connection was lost (%v): the server answered %s to a range request (%w, or the image changed)", d.dropCause, resp.Status, errNoRanges)
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return transientf("GET %s: the server answered %s", d.src, resp.Status)
	}
	return permanentf("GET %s: the server answered %s", d.src, resp.Status)
}

// checkRange checks a 206 answer's Content-Range ("bytes first-last/total") against what was
// asked.
func (d *download) checkRange(contentRange string) error {
	var first, last int64
	var total string
	_, err := fmt.Sscanf(contentRange, "bytes %d-%d/%s", &first, &last, &total)
	switch {
	case err != nil:
		return permanentf("cannot resume: the server's Content-Range %q is not of the form bytes first-last/total", contentRange)
	case first != d.offset || last < first:
		return permanentf("cannot resume: asked for the bytes from %d on, the server sent %q", d.offset, contentRange)
	case d.total >= 0 && total != "*" && total != fmt.Sprint(d.total):
		return permanentf("cannot resume: the image's size changed from %d to %s bytes", d.total, total)
	}
	return nil
}

// Read reads the body, reconnecting after a lost connection.
func (d *download) Read(p []byte) (int, error) {
	for {
		if d.err != nil {
			return 0, d.err
		}
		if d.body == nil {
			if err := d.connect(); err != nil {
				d.err = fmt.Errorf("%s: %w", d.truncated(), err)
				return 0, d.err
			}
		}
		n, err := d.body.Read(p)
		d.offset += int64(n)
		if n > 0 {
			d.failures = 0
			d.stall.Reset(d.src.stallTimeout())
		}
		switch {
		case err == nil:
			return n, nil
		case err == io.EOF && (d.total < 0 || d.offset >= d.total):
			d.closeBody()
			d.err = io.EOF
			return n, io.EOF
		case d.ctx.Err() != nil:
			d.closeBody()
			d.err = d.ctx.Err()
			return n, d.err
		}
		d.lost(err)
		if n > 0 {
			return n, nil
		}
	}
}

// lost records that the connection ended early with err.
func (d *download) lost(err error) {
	switch {
	case d.stalled.Load():
		err = fmt.Errorf("no data for %s", d.src.stallTimeout())
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	d.closeBody()
	d.failures++
	d.dropCause = err
	d.lastErr = transientf("connection lost: %w", err)
}

// truncated describes how far the download got.
func (d *download) truncated() string {
	if d.total >= 0 {
		return fmt.Sprintf("truncated: got %d of %d bytes from %s", d.offset, d.total, d.src)
	}
	return fmt.Sprintf("truncated: the connection to %s was lost after %d bytes", d.src, d.offset)
}

func (d *download) closeBody() {
	if d.body == nil {
		return
	}
	d.stall.Stop()
	d.cancel()
	d.body.Close()
	d.body = nil
}

// Close ends the download.
func (d *download) Close() error {
	d.closeBody()
	if d.err == nil {
		d.err = errors.New("download closed")
	}
	return nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
