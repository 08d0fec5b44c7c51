package migration

import (
	"crypto/tls"
	"io"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// A migration connection between node agents carries a guest's memory at up to hundreds of
// MB/s. crypto/tls writes each record of at most 16 KiB with a write of its own, so relaying
// one 256 KiB read of the source's socket took 16 sends, each a trip through the Pod and node
// network stacks and a wake-up of the receiving agent. peerConn sends the records of one Write
// with one send instead.

// batchingConn is the TCP connection under a peer's TLS connection: while it holds, writes
// gather in a buffer, which flush sends in one write. Writes are serialized, so a record the
// TLS layer writes on its own (an alert) keeps its place.
type batchingConn struct {
	net.Conn
	mu   sync.Mutex
	hold bool
	buf  []byte
}

func (c *batchingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hold {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// holdWrites makes writes gather until flush.
func (c *batchingConn) holdWrites() {
	c.mu.Lock()
	c.hold = true
	c.mu.Unlock()
}

// flush sends what gathered and lets writes through again.
func (c *batchingConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// peerConn is a migration connection to another node agent: TLS over raw, each Write's
// records sent with one write.
type peerConn struct {
	relay.BufferedConn
	raw *batchingConn
}

func (c *peerConn) Write(p []byte) (int, error) {
	c.raw.holdWrites()
	n, err := c.BufferedConn.Write(p)
	if ferr := c.raw.flush(); err == nil && ferr != nil {
		return 0, ferr
	}
	return n, err
}

// maxRecordPayload is the most plaintext one TLS record carries.
const maxRecordPayload = 16 << 10

// recordCoalescer reads a peer's TLS records, which crypto/tls returns one per Read, into
// one read of up to len(p) while whole records keep arriving and more bytes wait, read ahead
// or in the kernel: the agent then writes the guest's memory to the target's QEMU in large
// writes rather than waking it for every 16 KiB. A short record ends a read, and so do empty
// buffers, so that a small message (a libvirt or NBD reply) is never held back.
type recordCoalescer struct {
	r     io.Reader
	ahead *readAheadConn  // under the TLS connection, when the agent's server accepted it
	raw   syscall.RawConn // the TCP connection under the TLS one
}

// coalesceRecords reads r, the plaintext of TLS connection conn, through a recordCoalescer,
// and turns on read-ahead where the agent's server accepted conn; it returns r itself where
// conn is not TLS over a socket.
func coalesceRecords(conn net.Conn, r io.Reader) io.Reader {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return r
	}
	under := tc.NetConn()
	ahead, ok := under.(*readAheadConn)
	if ok {
		ahead.readAhead()
		under = ahead.Conn
	}
	sc, ok := under.(syscall.Conn)
	if !ok {
		return r
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return r
	}
	return &recordCoalescer{r: r, ahead: ahead, raw: raw}
}

func (c *recordCoalescer) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for err == nil && n > 0 && n%maxRecordPayload == 0 && len(p)-n >= maxRecordPayload && c.queued() {
		var m int
		m, err = c.r.Read(p[n:])
		n += m
	}
	return n, err
}

// queued reports whether bytes wait, read ahead or in the connection's kernel receive buffer.
func (c *recordCoalescer) queued() bool {
	if c.ahead != nil && c.ahead.buffered() > 0 {
		return true
	}
	waiting := 0
	var err error
	if cerr := c.raw.Control(func(fd uintptr) { waiting, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); cerr != nil {
		return false
	}
	return err == nil && waiting > 0
}

// readAheadConn is a connection the agent's HTTPS server accepted, under its TLS connection.
// crypto/tls reads a record (at most 16 KiB) per read of the socket; once a peer's migration
// connection took it over (readAhead), each read of the socket fills a relay.SpliceBuffer instead,
// from which the records are then taken: a guest's memory arrives with a sixteenth of the
// system calls. Its reads come from one goroutine at a time, as a TLS connection's do.
type readAheadConn struct {
	net.Conn
	buf  []byte // nil: reads go straight to the socket
	r, w int    // buf[r:w] was read ahead and not yet taken
}

// readAhead turns read-ahead on; the connection must not be read concurrently.
func (c *readAheadConn) readAhead() {
	if c.buf == nil {
		c.buf = make([]byte, relay.SpliceBuffer)
	}
}

// buffered is the number of bytes read ahead and not yet taken.
func (c *readAheadConn) buffered() int { return c.w - c.r }

func (c *readAheadConn) Read(p []byte) (int, error) {
	if c.r == c.w {
		if c.buf == nil || len(p) >= len(c.buf) {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.buf)
		c.r, c.w = 0, n
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, c.buf[c.r:c.w])
	c.r += n
	return n, nil
}

// ReadAheadListener wraps the connections a listener accepts in readAheadConns.
type ReadAheadListener struct{ net.Listener }

func (l ReadAheadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &readAheadConn{Conn: c}, nil
}
