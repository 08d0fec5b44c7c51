package vmistream

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// ShuttingDown is the close message of the console and VNC sessions vireo-apiserver relays
// when it stops (a rollout, a scale-down): clients connect again, through another replica.
const ShuttingDown = "vireo-apiserver is shutting down: connect again"

// goingAwayCode is the close code of ShuttingDown (RFC 6455: the endpoint is going away).
const goingAwayCode = 1001

// goAwayGrace bounds how long a session that is mid-frame may take to reach a frame's end
// before its connection closes without the close message.
const goAwayGrace = 2 * time.Second

// Sessions are the console and VNC sessions this server relays. When the server stops
// (GoAway), each ends with a close message saying so rather than a broken connection, and new
// ones are refused with 503, which clients retry.
type Sessions struct {
	mu       sync.Mutex
	stopping bool
	open     map[*goAwayConn]struct{}
}

// NewSessions returns an empty set of sessions.
func NewSessions() *Sessions { return &Sessions{open: map[*goAwayConn]struct{}{}} }

// GoAway ends every session with ShuttingDown and refuses new ones.
func (s *Sessions) GoAway() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	for c := range s.open {
		go c.goAway(ShuttingDown)
	}
}

// Stopping reports whether GoAway was called.
func (s *Sessions) Stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// writer wraps the response of a session so that its hijacked connection joins s.
func (s *Sessions) writer(w http.ResponseWriter) http.ResponseWriter {
	return &goAwayWriter{ResponseWriter: w, sessions: s}
}

func (s *Sessions) add(c *goAwayConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open[c] = struct{}{}
	if s.stopping {
		go c.goAway(ShuttingDown)
	}
}

func (s *Sessions) remove(c *goAwayConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, c)
}

// goAwayWriter is a session's response; its Hijack returns a goAwayConn.
type goAwayWriter struct {
	http.ResponseWriter
	sessions *Sessions
}

func (w *goAwayWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response cannot be hijacked")
	}
	conn, rw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	c := &goAwayConn{Conn: conn, sessions: w.sessions}
	w.sessions.add(c)
	return c, bufio.NewReadWriter(rw.Reader, bufio.NewWriter(c)), nil
}

// goAwayConn is the client's connection of a session: it follows the frames written to it so
// that a close message can go between two of them.
type goAwayConn struct {
	net.Conn
	sessions *Sessions

	mu     sync.Mutex
	frames frameTracker
	reason string // the close message to send at the next frame boundary
	closed bool
}

func (c *goAwayConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Write(p)
	c.frames.advance(p[:n])
	if err == nil && c.reason != "" && c.frames.atBoundary() {
		c.sendCloseLocked()
	}
	return n, err
}

func (c *goAwayConn) Close() error {
	c.sessions.remove(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.Conn.Close()
}

// goAway sends the close message with reason at the next frame boundary (now, between
// frames), or closes the connection after goAwayGrace.
func (c *goAwayConn) goAway(reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.reason = reason
	if c.frames.atBoundary() {
		c.sendCloseLocked()
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	time.AfterFunc(goAwayGrace, func() { _ = c.Close() })
}

// sendCloseLocked writes the close message and closes the connection: the relay's copies end
// and the node agent's connection closes with them.
func (c *goAwayConn) sendCloseLocked() {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Conn.Write(closeFrame(goingAwayCode, c.reason))
	c.closed = true
	_ = c.Conn.Close()
}
