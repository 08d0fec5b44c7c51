package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// guestMarker is what the test guest prints on its serial console once booted (test/images).
const guestMarker = "VIREO-GUEST-READY"

// consolePoll is how often a console watcher tries to connect before QEMU has bound the socket.
// QEMU drops serial output while no client is connected, so it must connect before the marker.
const consolePoll = 20 * time.Millisecond

// consoleWatch connects to a serial console socket as soon as it accepts a connection and
// records when it connected and when the guest printed the marker.
type consoleWatch struct {
	path     string
	done     chan struct{} // closed once the marker was seen or the watch gave up
	doneOnce sync.Once

	mu        sync.Mutex
	connected time.Time
	marker    time.Time
	tail      strings.Builder // the last output, for errors
	err       error
	conn      net.Conn
}

// watchConsole starts watching the socket at path until ctx ends.
func watchConsole(ctx context.Context, path string) *consoleWatch {
	w := &consoleWatch{path: path, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

func (w *consoleWatch) run(ctx context.Context) {
	defer w.finish()
	tick := time.NewTicker(consolePoll)
	defer tick.Stop()
	var conn net.Conn
	for conn == nil {
		c, err := dialUnix(w.path)
		if err == nil {
			conn = c
			break
		}
		select {
		case <-ctx.Done():
			w.fail(fmt.Errorf("console %s never accepted a connection: %w (last: %v)", w.path, ctx.Err(), err))
			return
		case <-tick.C:
		}
	}
	w.mu.Lock()
	w.connected, w.conn = time.Now(), conn
	w.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	w.read(conn)
}

// read reads until the connection ends, recording when the marker first appears. It keeps
// draining afterwards, so the guest's console never blocks on a full socket.
func (w *consoleWatch) read(conn net.Conn) {
	buf := make([]byte, 4096)
	var window string
	seen := false
	for {
		n, err := conn.Read(buf)
		now := time.Now()
		if n > 0 && !seen {
			window += string(buf[:n])
			seen = strings.Contains(window, guestMarker)
			w.record(buf[:n], now, seen)
			if len(window) > len(guestMarker) {
				window = window[len(window)-len(guestMarker):]
			}
			if seen {
				w.finish()
			}
		}
		if err != nil {
			if !seen {
				w.fail(fmt.Errorf("console %s closed before the guest printed %s: %v", w.path, guestMarker, err))
			}
			return
		}
	}
}

// record keeps the output's tail and, when marker is set, the time the marker arrived.
func (w *consoleWatch) record(out []byte, at time.Time, marker bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail.Write(out)
	if w.tail.Len() > 4096 {
		t := w.tail.String()[w.tail.Len()-2048:]
		w.tail.Reset()
		w.tail.WriteString(t)
	}
	if marker {
		w.marker = at
	}
}

// finish closes done, once.
func (w *consoleWatch) finish() { w.doneOnce.Do(func() { close(w.done) }) }

func (w *consoleWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// result returns the connection and marker times (zero when not reached) and why not.
func (w *consoleWatch) result() (connected, marker time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.connected, w.marker, w.err
}

// output is the last console output, for error messages.
func (w *consoleWatch) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tail.String()
}

// close closes the connection (QEMU then accepts the next client).
func (w *consoleWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.Close()
	}
}

// dialUnix connects to a unix socket whose path may be longer than a socket address holds
// (the nodes' directories are deep under _output): through its directory's descriptor.
func dialUnix(path string) (net.Conn, error) {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}
