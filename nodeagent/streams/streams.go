// Package streams is the node agent's console and VNC sessions and screenshots: each session
// splices a websocket (KubeVirt's plain.kubevirt.io subprotocol, binary frames) with a socket
// of the VMI's launcher, one per VMI and kind (a new one replaces it, as KubeVirt's do), besides
// which a VMI's display takes a few shared viewers (Vireo's vnc?shared=true: a viewer that
// joins disconnects no one, as the web console's pages do), pings the client so idle sessions stay
// open through proxies and dead clients are noticed, and ends with a close message saying why
// (nodeagentapi.Close*).
package streams

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// subprotocol is KubeVirt's websocket subprotocol for console and VNC: binary frames that
// carry the guest's bytes unchanged.
const subprotocol = v1.PlainStreamProtocolName

// streamBufferSize bounds what one direction of a session holds at a time: bytes are copied
// through a buffer of this size, never collected, so a slow reader slows the guest down.
const streamBufferSize = 32 << 10

// closeGrace is how long a closing session waits for the client's close frame.
const closeGrace = 2 * time.Second

// streamKey names one VMI's console or VNC.
type streamKey struct {
	namespace, name, kind string
	// viewer numbers a shared VNC viewer's session (0: the VMI's one session of the kind).
	viewer uint64
}

func (k streamKey) String() string {
	s := k.namespace + "/" + k.name + "/" + k.kind
	if k.viewer != 0 {
		s += fmt.Sprintf("/shared-%d", k.viewer)
	}
	return s
}

// maxSharedViewers bounds the shared viewers of one VMI's display: each holds a connection to
// QEMU's VNC server, which sends every one of them the screen's updates.
const maxSharedViewers = 8

// Server is the open console and VNC sessions of a node agent and their endpoints.
type Server struct {
	// ping is the keep-alive period; a client silent for three periods is gone.
	ping      time.Duration
	dirs      nodedirs.Dirs
	launchers Launchers

	mu     sync.Mutex
	active map[streamKey]*stream
	// viewers numbers the shared viewers' sessions.
	viewers uint64
	closed  bool
	wg      sync.WaitGroup
}

// Launchers find the launchers of the node's VMIs.
type Launchers interface {
	// Running is the launcher Pod that runs VMI namespace/name on this node now, or why none does.
	Running(namespace, name string) (types.UID, *nodeagentapi.Error)
	// EndMessage says why the console or VNC socket of launcher Pod podUID, which ran VMI
	// namespace/name, ended (nodeagentapi.CloseVMIStopped or CloseVMIMigrated).
	EndMessage(podUID types.UID, namespace, name string) string
}

// New returns a server without sessions, keeping clients alive with a ping every ping, that
// reaches launchers' sockets in dirs.
func New(ping time.Duration, dirs nodedirs.Dirs, launchers Launchers) *Server {
	return &Server{ping: ping, dirs: dirs, launchers: launchers, active: map[streamKey]*stream{}}
}

// stream is one session. ws is nil until the upgrade succeeded; mu guards it, since end is
// called from other goroutines (takeover, VMI stopped, agent exiting).
type stream struct {
	key  streamKey
	sock net.Conn
	// sockEnded says why the launcher's socket ended (nil: the VMI stopped).
	sockEnded func() string

	mu sync.Mutex
	ws *websocket.Conn
	// ended is set by end, with the close frame it was asked to send, under mu: either end sees
	// ws and sends the frame, or serve sees ended once it set ws and sends it.
	ended   bool
	endCode int
	endMsg  string

	once    sync.Once
	endedCh chan struct{}
}

// errBusy: a VNC client asked to preserve a session that is active.
var errBusy = errors.New("busy")

// reserve claims key for a new session splicing sock. With preserve, an active session makes it
// fail with errBusy; otherwise the previous session is ended once the new one starts.
func (s *Server) reserve(key streamKey, preserve bool, sock net.Conn) (*stream, *stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errors.New(nodeagentapi.CloseAgentExits)
	}
	prev := s.active[key]
	if prev != nil && preserve {
		return nil, nil, errBusy
	}
	st := &stream{key: key, sock: sock, endedCh: make(chan struct{})}
	s.active[key] = st
	s.wg.Add(1)
	return st, prev, nil
}

// errTooManyViewers: the VMI's display has maxSharedViewers shared viewers already.
var errTooManyViewers = errors.New("too many shared viewers")

// reserveViewer claims a session for a shared viewer of key's display splicing sock: it
// replaces no session and no session replaces it.
func (s *Server) reserveViewer(key streamKey, sock net.Conn) (*stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New(nodeagentapi.CloseAgentExits)
	}
	n := 0
	for k := range s.active {
		if k.viewer != 0 && k.namespace == key.namespace && k.name == key.name && k.kind == key.kind {
			n++
		}
	}
	if n >= maxSharedViewers {
		return nil, errTooManyViewers
	}
	s.viewers++
	key.viewer = s.viewers
	st := &stream{key: key, sock: sock, endedCh: make(chan struct{})}
	s.active[key] = st
	s.wg.Add(1)
	return st, nil
}

// release forgets st (if it is still key's session) and marks it finished.
func (s *Server) release(st *stream) {
	s.mu.Lock()
	if s.active[st.key] == st {
		delete(s.active, st.key)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// EndVMI ends the sessions of VMI namespace/name with msg.
func (s *Server) EndVMI(namespace, name, msg string) {
	s.mu.Lock()
	var ending []*stream
	for k, st := range s.active {
		if k.namespace == namespace && k.name == name {
			ending = append(ending, st)
		}
	}
	s.mu.Unlock()
	for _, st := range ending {
		st.end(websocket.CloseNormalClosure, msg)
	}
}

// CloseAll ends every session and waits for them; no new session starts afterwards.
func (s *Server) CloseAll() {
	s.mu.Lock()
	s.closed = true
	ending := make([]*stream, 0, len(s.active))
	for _, st := range s.active {
		ending = append(ending, st)
	}
	s.mu.Unlock()
	for _, st := range ending {
		st.end(websocket.CloseGoingAway, nodeagentapi.CloseAgentExits)
	}
	s.wg.Wait()
}

// Count is the number of open sessions of kind.
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, st := range s.active {
		st.mu.Lock()
		if k.kind == kind && st.ws != nil {
			n++
		}
		st.mu.Unlock()
	}
	return n
}

// end closes the session once: it sends the client a close frame with code and msg, stops
// the guest side, and gives the client closeGrace to answer before the connection is cut.
func (st *stream) end(code int, msg string) {
	st.once.Do(func() {
		st.mu.Lock()
		ws := st.ws
		st.ended, st.endCode, st.endMsg = true, code, msg
		st.mu.Unlock()
		close(st.endedCh)
		if st.sock != nil {
			_ = st.sock.Close()
		}
		if ws == nil {
			return
		}
		deadline := time.Now().Add(closeGrace)
		if err := ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, msg), deadline); err != nil {
			_ = ws.Close()
			return
		}
		_ = ws.SetReadDeadline(deadline)
	})
}

// upgrader answers only KubeVirt's subprotocol. Origin is not checked: the node agent is reached
// only by vireo-apiserver (mutual TLS), which authorized the user.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  streamBufferSize,
	WriteBufferSize: streamBufferSize,
	Subprotocols:    []string{subprotocol},
	CheckOrigin:     func(*http.Request) bool { return true },
}

// checkStreamRequest refuses what cannot become a session, with the reason.
func checkStreamRequest(r *http.Request) error {
	if !websocket.IsWebSocketUpgrade(r) {
		return errors.New("this endpoint streams over a websocket: send GET with 'Connection: Upgrade' and 'Upgrade: websocket'")
	}
	for _, p := range websocket.Subprotocols(r) {
		if p == subprotocol {
			return nil
		}
	}
	return fmt.Errorf("websocket subprotocol %s is required (Sec-WebSocket-Protocol)", subprotocol)
}

// serve upgrades r and splices the websocket with st's socket until either side ends. It owns
// the socket and st's registration. replacedMsg is sent to prev, the session st replaces.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, st, prev *stream, replacedMsg string) {
	defer s.release(st)
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader has answered the client with the reason.
		st.end(websocket.CloseProtocolError, "")
		return
	}
	if prev != nil {
		prev.end(websocket.CloseNormalClosure, replacedMsg)
	}
	st.mu.Lock()
	st.ws = ws
	ended, code, msg := st.ended, st.endCode, st.endMsg
	st.mu.Unlock()
	if ended {
		// Ended (VMI stopped or migrated, agent exiting) before the upgrade finished: end saw no
		// websocket, so the close frame it was asked for is sent here.
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, msg), time.Now().Add(closeGrace))
		_ = ws.Close()
		return
	}
	log := klog.FromContext(r.Context()).WithValues("session", st.key.String())
	log.Info("Stream session started")
	s.splice(st)
	st.mu.Lock()
	msg = st.endMsg
	st.mu.Unlock()
	if msg == "" {
		msg = "the client or the connection to it ended it"
	}
	log.Info("Stream session ended", "reason", msg)
}

// splice copies both ways and pings the client; it returns when the session is over, with
// both connections closed and its goroutines gone.
func (s *Server) splice(st *stream) {
	ws := st.ws
	ws.SetReadLimit(streamBufferSize)
	extend := func() {
		select {
		case <-st.endedCh: // closing: the deadline is closeGrace
		default:
			_ = ws.SetReadDeadline(time.Now().Add(3 * s.ping))
		}
	}
	extend()
	ws.SetPongHandler(func(string) error { extend(); return nil })

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // guest -> client
		defer wg.Done()
		s.guestToClient(st)
	}()
	go func() { // keep-alive
		defer wg.Done()
		t := time.NewTicker(s.ping)
		defer t.Stop()
		for {
			select {
			case <-st.endedCh:
				return
			case <-t.C:
				// A ping that cannot be written in time (a slow reader holds the writer: back-
				// pressure) is skipped; the read deadline decides whether the client is gone.
				_ = ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.ping))
			}
		}
	}()
	s.clientToGuest(st, extend)
	// The client is gone or closed: end the session (no-op if already ended) and cut.
	st.end(websocket.CloseNormalClosure, "")
	_ = ws.Close()
	wg.Wait()
}

func (s *Server) guestToClient(st *stream) {
	buf := make([]byte, streamBufferSize)
	var last time.Time
	for {
		n, err := st.sock.Read(buf)
		if n > 0 && err == nil && time.Since(last) < coalesceWindow {
			n, err = gather(st.sock, buf, n)
		}
		last = time.Now()
		if n > 0 {
			if werr := st.ws.WriteMessage(websocket.BinaryMessage, buf[:n]); werr != nil {
				st.end(websocket.CloseGoingAway, "")
				_ = st.ws.Close()
				return
			}
		}
		if err != nil {
			msg := nodeagentapi.CloseVMIStopped
			if st.sockEnded != nil {
				msg = st.sockEnded()
			}
			klog.InfoS("The launcher's socket of a stream session closed", "session", st.key.String(), "reason", msg)
			st.end(websocket.CloseNormalClosure, msg)
			return
		}
	}
}

// coalesceWindow: output that follows other output this closely is bulk (the guest printing
// fast, a screen update) and is gathered into fewer, larger frames for up to this long. QEMU's
// serial port writes a byte at a time; a frame each would cost every hop (node agent,
// vireo-apiserver, kube-apiserver) a TLS record and a copy per byte. A lone keystroke's echo is
// not held back.
const coalesceWindow = 2 * time.Millisecond

// gather reads more into buf after its first n bytes until the window passes or buf fills;
// a deadline passing is not an error.
func gather(sock net.Conn, buf []byte, n int) (int, error) {
	_ = sock.SetReadDeadline(time.Now().Add(coalesceWindow))
	defer func() { _ = sock.SetReadDeadline(time.Time{}) }()
	for n < len(buf) {
		m, err := sock.Read(buf[n:])
		n += m
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// clientToGuest copies the client's messages to the launcher's socket until either fails. Only
// the socket's failure means the VMI stopped; a message that breaks off (a protocol error, past
// the read limit, the connection lost) ends the session as any end of the client does.
func (s *Server) clientToGuest(st *stream, extend func()) {
	buf := make([]byte, streamBufferSize)
	guest := &guestWriter{w: st.sock}
	for {
		typ, r, err := st.ws.NextReader()
		if err != nil {
			return
		}
		extend()
		if typ != websocket.BinaryMessage && typ != websocket.TextMessage {
			continue
		}
		if _, err := io.CopyBuffer(guest, r, buf); err != nil {
			if guest.err != nil {
				st.end(websocket.CloseNormalClosure, nodeagentapi.CloseVMIStopped)
			}
			return
		}
	}
}

// guestWriter writes to the launcher's socket and keeps its error, to tell it from the
// client's in a copy.
type guestWriter struct {
	w   io.Writer
	err error
}

func (g *guestWriter) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if err != nil {
		g.err = err
	}
	return n, err
}
