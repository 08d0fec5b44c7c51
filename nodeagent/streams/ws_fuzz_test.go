package streams

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/internal/testsupport"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// FuzzStreamFrames sends arbitrary bytes, after a valid handshake, as the websocket frames of a
// console session's client: vireo-apiserver passes the user's frames to the node agent
// unchanged, so they are the user's. The session splices them to the launcher's socket (here
// one end of a socket pair) until the client ends it. It must:
//   - deliver to the launcher's socket exactly the payloads of the client's data frames (text
//     and binary, fragments included, unmasked), in order, up to where the frames end or break
//     the protocol (a frame cut short delivers what arrived of it);
//   - end the session, within a deadline, when the client closes, half-closes, breaks the
//     protocol or exceeds the read limit: the launcher's socket and the client's connection
//     closed, the session forgotten;
//   - answer the client's pings with pongs of the same payload, then send exactly one close
//     frame: the client's own code back after its close, 1002 after a protocol error, 1009 past
//     the read limit, else 1000 without a reason (never "the VMI stopped": the launcher is fine).
func FuzzStreamFrames(f *testing.F) {
	testsupport.QuietKlog(f)
	for _, seed := range [][]byte{
		cat(frame(0x82, []byte("hello"), 0x01020304), frame(0x81, []byte("ls -l\r"), 0)),
		cat(frame(0x02, []byte("frag"), 7), frame(0x89, []byte("ping"), 9), frame(0x80, []byte("ment"), 11), frame(0x88, closePayload(1000, "bye"), 3)),
		cat(frame(0x82, []byte("x"), 5), frame(0x8a, []byte("pong"), 5), frame(0x88, closePayload(4000, ""), 0)),
		cat(frame(0x82, []byte("a"), 1), []byte{0x82, 0x01, 'b'}),                                         // unmasked
		cat(frame(0x82, []byte("a"), 1), frame(0xc2, []byte("b"), 1)),                                     // RSV1
		cat(frame(0x82, []byte("a"), 1), frame(0x83, []byte("b"), 1)),                                     // opcode 3
		cat(frame(0x80, []byte("a"), 1)),                                                                  // continuation first
		cat(frame(0x02, []byte("a"), 1), frame(0x82, []byte("b"), 1)),                                     // data inside a message
		cat(frame(0x09, []byte("a"), 1)),                                                                  // fragmented ping
		cat(frame(0x88, closePayload(1005, ""), 1)),                                                       // a code never sent
		cat(frame(0x88, closePayload(1000, "\xff"), 1)),                                                   // invalid UTF-8
		cat(frame(0x88, []byte{3}, 1)),                                                                    // 1-byte close
		cat(frame(0x82, bytes.Repeat([]byte{'v'}, 300), 0x55aa55aa), frame(0x82, nil, 2)),                 // 16-bit length, empty
		cat(frame(0x02, bytes.Repeat([]byte{'w'}, 20000), 3), []byte{0x80, 0xfe, 0x40, 0x00, 0, 0, 0, 0}), // past the read limit
		[]byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},                                         // a negative 64-bit length
		frame(0x82, []byte("cut short"), 4)[:10],
		{},
	} {
		f.Add(seed)
	}
	h := newFrameHarness(f)
	f.Fuzz(func(t *testing.T, script []byte) {
		testsupport.Deadline(30*time.Second, func() { h.run(t, script) })
	})
}

// frame is a client frame: first byte b0 (FIN, RSV, opcode), payload masked with key, its
// length in the shortest encoding.
func frame(b0 byte, payload []byte, key uint32) []byte {
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n < 1<<16:
		out = binary.BigEndian.AppendUint16(append(out, 0x80|126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 0x80|127), uint64(n))
	}
	out = binary.BigEndian.AppendUint32(out, key)
	masked := bytes.Clone(payload)
	mask(masked, out[len(out)-4:])
	return append(out, masked...)
}

func closePayload(code uint16, text string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, code), text...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// mask masks (or unmasks) p in place with key.
func mask(p, key []byte) {
	for i := range p {
		p[i] ^= key[i%4]
	}
}

// closeEmpty stands for a close frame without a payload in a session's expected end.
const closeEmpty = websocket.CloseNoStatusReceived

// sessionEnd is what a session must do with a client's bytes: deliver, answer pings, and send
// one close frame with closeCode (closeEmpty: no payload).
type sessionEnd struct {
	delivered []byte
	pongs     [][]byte
	closeCode int
}

// expectSession reads script as the frames of a client, as RFC 6455 and gorilla/websocket's
// server (which the session uses, with the read limit streamBufferSize and no extensions) do.
func expectSession(script []byte) sessionEnd {
	var out sessionEnd
	open := false // a fragmented data message is open
	var msgLen int64
	take := func(n int64) ([]byte, bool) {
		if n > int64(len(script)) {
			script = nil
			return nil, false
		}
		p := script[:n]
		script = script[n:]
		return p, true
	}
	for {
		hdr, ok := take(2)
		if !ok {
			out.closeCode = websocket.CloseNormalClosure // the client half-closed, maybe mid-frame
			return out
		}
		fin, op, n := hdr[0]&0x80 != 0, hdr[0]&0x0f, int64(hdr[1]&0x7f)
		bad := hdr[0]&0x70 != 0 || hdr[1]&0x80 == 0 // RSV bits; an unmasked client frame
		switch op {
		case websocket.CloseMessage, websocket.PingMessage, websocket.PongMessage:
			bad = bad || n > 125 || !fin
		case websocket.TextMessage, websocket.BinaryMessage:
			bad, msgLen = bad || open, 0
		case 0:
			bad = bad || !open
		default:
			bad = true
		}
		if bad {
			out.closeCode = websocket.CloseProtocolError
			return out
		}
		if n >= 126 {
			ext, ok := take(2 + 6*(n-126)) // 126: a 16-bit length follows, 127: a 64-bit one
			switch {
			case !ok:
				out.closeCode = websocket.CloseNormalClosure
				return out
			case n == 126:
				n = int64(binary.BigEndian.Uint16(ext))
			default:
				n = int64(binary.BigEndian.Uint64(ext))
			}
		}
		key, ok := take(4)
		if !ok || n < 0 {
			out.closeCode = websocket.CloseNormalClosure // cut short; a "negative" length is refused without a close frame
			return out
		}
		if op == websocket.TextMessage || op == websocket.BinaryMessage || op == 0 {
			switch msgLen += n; {
			case msgLen < 0: // overflowed: refused without a close frame
				out.closeCode = websocket.CloseNormalClosure
				return out
			case msgLen > streamBufferSize:
				out.closeCode = websocket.CloseMessageTooBig
				return out
			}
			open = !fin
			got := min(n, int64(len(script)))
			payload, _ := take(got)
			payload = bytes.Clone(payload)
			mask(payload, key)
			out.delivered = append(out.delivered, payload...)
			if got < n {
				out.closeCode = websocket.CloseNormalClosure
				return out
			}
			continue
		}
		payload, ok := take(n)
		if !ok {
			out.closeCode = websocket.CloseNormalClosure
			return out
		}
		payload = bytes.Clone(payload)
		mask(payload, key)
		if out.control(op, payload) {
			return out
		}
	}
}

// control takes in a control frame with its (unmasked) payload and reports whether it ended
// the session: a ping is answered with a pong, a close with a close frame of its code (a
// protocol error for a code or reason a peer may not send).
func (out *sessionEnd) control(op byte, payload []byte) bool {
	switch op {
	case websocket.PingMessage:
		out.pongs = append(out.pongs, payload)
	case websocket.CloseMessage:
		out.closeCode = closeEmpty
		if len(payload) >= 2 {
			out.closeCode = int(binary.BigEndian.Uint16(payload))
			if !receivableCloseCode(out.closeCode) || !utf8.Valid(payload[2:]) {
				out.closeCode = websocket.CloseProtocolError
			}
		}
		return true
	}
	return false
}

// receivableCloseCode reports whether a peer may send code (RFC 6455 7.4, as gorilla/websocket
// lists them: not 1004-1006, 1014 or 1015).
func receivableCloseCode(code int) bool {
	return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1013) || (code >= 3000 && code <= 4999)
}

// frameHarness serves sessions of one Server over socket pairs: each run hands the server's
// end of a client connection to an HTTP server, which upgrades it and splices it with the
// server's end of a launcher socket pair.
type frameHarness struct {
	s        *Server
	conns    chan net.Conn
	n        atomic.Int64
	sessions sync.Map // path -> *frameSession
}

// frameSession is one session's launcher socket and the end of its serve.
type frameSession struct {
	sock   net.Conn
	served chan struct{}
}

func newFrameHarness(f *testing.F) *frameHarness {
	h := &frameHarness{s: New(time.Minute, nodedirs.Dirs{}, nil), conns: make(chan net.Conn)}
	srv := &http.Server{Handler: http.HandlerFunc(h.serve), ReadHeaderTimeout: 5 * time.Second}
	l := &chanListener{conns: h.conns, closed: make(chan struct{})}
	go func() { _ = srv.Serve(l) }()
	f.Cleanup(func() { _ = srv.Close() })
	return h
}

func (h *frameHarness) serve(w http.ResponseWriter, r *http.Request) {
	v, ok := h.sessions.Load(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	fs := v.(*frameSession)
	defer close(fs.served)
	st, prev, err := h.s.reserve(streamKey{namespace: "ns", name: "vm", kind: nodeagentapi.StreamConsole}, false, fs.sock)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	h.s.serve(w, r, st, prev, nodeagentapi.CloseTakenOver)
}

// run plays script as a client's frames and checks the session against expectSession.
func (h *frameHarness) run(t *testing.T, script []byte) {
	client, server := socketPair(t)
	launcher, sock := socketPair(t)
	defer client.Close()
	defer launcher.Close()
	path := "/session/" + strconv.FormatInt(h.n.Add(1), 10)
	fs := &frameSession{sock: sock, served: make(chan struct{})}
	h.sessions.Store(path, fs)
	defer h.sessions.Delete(path)
	h.conns <- server
	br := handshake(t, client, path)
	deadline := time.Now().Add(20 * time.Second)
	_ = client.SetDeadline(deadline)
	_ = launcher.SetDeadline(deadline)
	go func() {
		_, _ = client.Write(script) // fails once the server stopped reading: fine
		_ = client.CloseWrite()
	}()
	delivered := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(launcher)
		delivered <- b
	}()
	fromServer, err := io.ReadAll(br)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading the server's frames: %v (after %q)", err, fromServer)
	}
	want := expectSession(script)
	if got := <-delivered; !bytes.Equal(got, want.delivered) {
		t.Fatalf("the launcher's socket received %q, want %q", got, want.delivered)
	}
	select {
	case <-fs.served:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end")
	}
	if n := h.s.Count(nodeagentapi.StreamConsole); n != 0 {
		t.Fatalf("%d sessions open after the end", n)
	}
	checkServerFrames(t, fromServer, want)
}

// checkServerFrames checks the server's frames b: the pongs, then one close frame, then nothing.
func checkServerFrames(t *testing.T, b []byte, want sessionEnd) {
	var pongs [][]byte
	for len(b) > 0 {
		if len(b) < 2 || b[0]&0x70 != 0 || b[0]&0x80 == 0 || b[1]&0x80 != 0 || int(b[1]&0x7f) > len(b)-2 {
			t.Fatalf("the server sent a malformed or masked frame: %q", b)
		}
		op, payload := b[0]&0x0f, b[2:2+b[1]&0x7f]
		b = b[2+len(payload):]
		switch op {
		case websocket.PongMessage:
			pongs = append(pongs, payload)
			continue
		case websocket.CloseMessage:
		default:
			t.Fatalf("the server sent a frame of opcode %d", op)
		}
		code := closeEmpty
		if len(payload) >= 2 {
			code = int(binary.BigEndian.Uint16(payload))
		}
		if code != want.closeCode || (code == websocket.CloseNormalClosure && len(payload) != 2) || len(b) != 0 {
			t.Fatalf("the server closed with %q then sent %q; want code %d (without a reason for 1000)", payload, b, want.closeCode)
		}
		if fmt.Sprint(pongs) != fmt.Sprint(want.pongs) {
			t.Fatalf("the server answered pongs %q, want %q", pongs, want.pongs)
		}
		return
	}
	t.Fatalf("the server sent no close frame (pongs %q); want code %d", pongs, want.closeCode)
}

// handshake upgrades client's connection to a websocket session at path and returns the
// reader of what follows the server's answer.
func handshake(t *testing.T, client net.Conn, path string) *bufio.Reader {
	req := "GET " + path + " HTTP/1.1\r\nHost: agent\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: " + subprotocol + "\r\n\r\n"
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(client, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(client)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade: %v %v", resp, err)
	}
	return br
}

// socketPair is a connected pair of unix stream sockets.
func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		file := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(file)
		file.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
	}
	return conns[0], conns[1]
}

// chanListener accepts the connections sent on conns.
type chanListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.UnixAddr{Name: "fuzz", Net: "unix"} }
