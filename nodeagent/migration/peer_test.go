package migration

import (
	"crypto/tls"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMigrationConnectionBuffersAreCapped: both ends of a migration connection between node
// agents keep their kernel buffers at migrationSocketBuffer instead of letting autotuning grow
// them (the dialing end before it connects, the accepting end once it took the connection over),
// so that at the switch-over little of the guest's state sits queued between the two QEMUs.
func TestMigrationConnectionBuffersAreCapped(t *testing.T) {
	d := net.Dialer{Control: capSocketBuffers}
	dialed, server := loopbackPair(t, func(address string) (net.Conn, error) { return d.Dial("tcp", address) })
	before := socketBuffers(t, server.(*net.TCPConn))
	// The accepting end gets the connection as net/http hands over a TLS one.
	capConnBuffers(tls.Server(server, &tls.Config{}))

	// Linux doubles what is set, for its bookkeeping, after holding it to the system's maximum.
	want := [2]int{2 * min(migrationSocketBuffer, sysctlInt(t, "net/core/wmem_max")), 2 * min(migrationSocketBuffer, sysctlInt(t, "net/core/rmem_max"))}
	if got := socketBuffers(t, dialed.(*net.TCPConn)); got != want {
		t.Errorf("dialing end: send, receive buffers = %v, want %v", got, want)
	}
	if got := socketBuffers(t, server.(*net.TCPConn)); got != want {
		t.Errorf("accepting end: send, receive buffers = %v (before: %v), want %v", got, before, want)
	}
}

// loopbackPair connects to a new loopback TCP listener with dial and returns both ends, closed
// when the test ends.
func loopbackPair(t *testing.T, dial func(address string) (net.Conn, error)) (dialed, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	if dialed, err = dial(ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dialed.Close() })
	if accepted = <-ch; accepted == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { accepted.Close() })
	return dialed, accepted
}

// sysctlInt reads a numeric sysctl.
func sysctlInt(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// socketBuffers reads a TCP connection's SO_SNDBUF and SO_RCVBUF.
func socketBuffers(t *testing.T, c *net.TCPConn) [2]int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got [2]int
	var errs [2]error
	if err := raw.Control(func(fd uintptr) {
		got[0], errs[0] = unix.GetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_SNDBUF)
		got[1], errs[1] = unix.GetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_RCVBUF)
	}); err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}
