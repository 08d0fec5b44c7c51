package migration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vireo-dev/vireo/localcluster/pki"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// countingConn counts the writes that reach a connection.
type countingConn struct {
	net.Conn
	writes atomic.Int32
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// readCountingTCP counts the reads of a TCP connection (and keeps its SyscallConn).
type readCountingTCP struct {
	*net.TCPConn
	reads atomic.Int32
}

func (c *readCountingTCP) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.TCPConn.Read(p)
}

// peerPair connects a peerConn over loopback TCP to a TLS server end, as two node agents'
// migration connection is, the accepting end over a readAheadConn as the agent's server has
// it; it returns the dialing end, the counter of its TCP writes, and the accepting end with its
// TCP connection, whose reads are counted.
func peerPair(t *testing.T) (*peerConn, *countingConn, *tls.Conn, *readCountingTCP) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir, "ca", "vireo-ca")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ServingCert("agent", []string{"agent"}, nil); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key"))
	if err != nil {
		t.Fatal(err)
	}
	tcp, server := loopbackPair(t, func(address string) (net.Conn, error) { return net.Dial("tcp", address) })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM())
	counted := &countingConn{Conn: tcp}
	raw := &batchingConn{Conn: counted}
	client := tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: "agent", MinVersion: tls.VersionTLS13, DynamicRecordSizingDisabled: true})
	accepted := &readCountingTCP{TCPConn: server.(*net.TCPConn)}
	srv := tls.Server(&readAheadConn{Conn: accepted}, &tls.Config{Certificates: []tls.Certificate{cert}})
	handshook := make(chan error, 1)
	go func() { handshook <- srv.Handshake() }()
	if err := client.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-handshook; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		srv.Close()
	})
	return &peerConn{BufferedConn: relay.BufferedConn{Conn: client, R: bufio.NewReader(client)}, raw: raw}, counted, srv, accepted
}

// TestPeerConnSendsAWriteAtOnce: a 256 KiB write to a peer goes out as one TCP write of its 16
// TLS records, not one each, and arrives intact.
func TestPeerConnSendsAWriteAtOnce(t *testing.T) {
	client, counted, srv, _ := peerPair(t)
	data := make([]byte, relay.SpliceBuffer)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	before := counted.writes.Load()
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(data))
		_, _ = io.ReadFull(srv, b)
		got <- b
	}()
	if n, err := client.Write(data); err != nil || n != len(data) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if w := counted.writes.Load() - before; w != 1 {
		t.Errorf("a %d-byte write took %d TCP writes, want 1", len(data), w)
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Error("the data arrived changed")
	}
}

// TestRecordCoalescerReadsWholeRecordsTogether: records waiting in the kernel come out of one
// read together, taken from the socket with one read (read-ahead), and a short message is not
// held back waiting for more.
func TestRecordCoalescerReadsWholeRecordsTogether(t *testing.T) {
	client, _, srv, tcp := peerPair(t)
	r := coalesceRecords(srv, srv)
	if _, ok := r.(*recordCoalescer); !ok {
		t.Fatal("a TLS connection over TCP is read without coalescing")
	}
	data := make([]byte, 6*maxRecordPayload) // within a loopback socket's default receive buffer
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write(data); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, tcp.TCPConn, len(data))
	readsBefore := tcp.reads.Load()
	buf := make([]byte, relay.SpliceBuffer)
	var got []byte
	largest := 0
	for len(got) < len(data) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, n)
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the data read changed")
	}
	if largest < 4*maxRecordPayload {
		t.Errorf("the largest read returned %d bytes, want at least %d: records were not read together", largest, 4*maxRecordPayload)
	}
	if reads := tcp.reads.Load() - readsBefore; reads > 1 {
		t.Errorf("%d records waiting in the kernel took %d reads of the socket, want 1", len(data)/maxRecordPayload, reads)
	}

	done := make(chan int, 1)
	go func() {
		n, _ := r.Read(buf)
		done <- n
	}()
	if _, err := client.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-done:
		if string(buf[:n]) != "reply" {
			t.Errorf("short message read as %q", buf[:n])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a short message was held back")
	}
}

// waitQueued waits until at least n bytes (and their TLS overhead) wait in c's receive buffer.
func waitQueued(t *testing.T, c *net.TCPConn, n int) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	err = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_ = raw.Control(func(fd uintptr) { queued, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		return queued >= n, nil
	})
	if err != nil {
		t.Fatalf("only %d of %d bytes arrived", queued, n)
	}
}
