// Package relay copies bytes between the node agent's connections: Splice joins two
// connections both ways, and a SocketProxy serves sockets in a Pod's emptyDir and splices each
// connection to the same socket elsewhere (a migration's sockets to the target launcher's, a
// clone's upload socket to the target upload Pod's).
package relay

import (
	"io"
	"net"
)

// SpliceBuffer is each direction's copy buffer: a guest's memory streams through at hundreds
// of MB/s, and bigger reads mean fewer wake-ups of the copying goroutines.
const SpliceBuffer = 256 << 10

// Splice copies both ways until both directions ended, then closes both.
func Splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	copyTo := func(dst, src net.Conn) {
		_, _ = io.CopyBuffer(dst, onlyReader{src}, make([]byte, SpliceBuffer))
		CloseWrite(dst)
		done <- struct{}{}
	}
	go copyTo(b, a)
	go copyTo(a, b)
	<-done
	<-done
	a.Close()
	b.Close()
}

// CloseWrite half-closes c where it can.
func CloseWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// onlyReader hides a connection's WriterTo, so io.CopyBuffer uses the buffer it is given.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// BufferedConn is a connection whose first bytes may already sit in a reader (R).
type BufferedConn struct {
	net.Conn
	R io.Reader
}

func (c *BufferedConn) Read(p []byte) (int, error) { return c.R.Read(p) }

// CloseWrite half-closes the underlying connection where it can.
func (c *BufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
