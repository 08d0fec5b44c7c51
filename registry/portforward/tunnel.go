package portforward

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// KubeVirt's keep-alive of port-forward tunnels: a ping every second; a client that answers
// none for a minute is gone.
const (
	pingInterval  = time.Second
	clientTimeout = time.Minute
	writeTimeout  = 10 * time.Second
	closeGrace    = time.Second
)

// bufferSize is the largest chunk read from the guest's connection, and so the largest message
// sent; a UDP datagram up to it is one message.
const bufferSize = 64 << 10

// upgrader answers only KubeVirt's subprotocol. Origin is not checked: requests reach
// vireo-apiserver only through kube-apiserver, which authenticated them by credentials a browser
// does not attach on its own.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  bufferSize,
	WriteBufferSize: bufferSize,
	Subprotocols:    []string{v1.PlainStreamProtocolName},
	CheckOrigin:     func(*http.Request) bool { return true },
}

// tunnel carries one websocket's binary messages to and from conn, the guest's port.
type tunnel struct {
	conn      net.Conn
	vmi       *v1.VirtualMachineInstance
	datagrams bool
}

// ServeHTTP upgrades the request and copies until either side ends; the guest's connection is
// closed in every case. The caller checked the request is a websocket upgrade (vmistream.CheckUpgrade).
func (t *tunnel) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	defer t.conn.Close()
	ws, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return // the upgrader answered with the reason
	}
	defer ws.Close()
	defer track(t.vmi.Namespace, t.vmi.Name)()
	log := klog.FromContext(req.Context()).WithValues("vmi", klog.KObj(t.vmi), "remote", t.conn.RemoteAddr().String())
	log.V(2).Info("Port-forward tunnel opened")

	var writeMu sync.Mutex // gorilla allows one writer at a time: data, pings and the close frame
	done := make(chan struct{})
	var once sync.Once
	// end closes the guest's connection and says goodbye to the client, whose answer (or the
	// grace passing) ends clientToGuest.
	end := func() {
		once.Do(func() {
			close(done)
			_ = t.conn.Close()
			writeMu.Lock()
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(closeGrace))
			writeMu.Unlock()
			_ = ws.SetReadDeadline(time.Now().Add(closeGrace))
		})
	}
	go t.keepAlive(ws, &writeMu, done, end)
	go func() { defer end(); t.guestToClient(ws, &writeMu) }()
	err = t.clientToGuest(ws)
	end()
	log.V(2).Info("Port-forward tunnel closed", "reason", err)
}

// clientToGuest writes each binary message to the guest's connection: as a stream for TCP, as one
// datagram per message for UDP. It returns when the client closes or goes silent.
func (t *tunnel) clientToGuest(ws *websocket.Conn) error {
	_ = ws.SetReadDeadline(time.Now().Add(clientTimeout))
	ws.SetPongHandler(func(string) error { return ws.SetReadDeadline(time.Now().Add(clientTimeout)) })
	buf := make([]byte, bufferSize)
	for {
		kind, r, err := ws.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code == websocket.CloseNormalClosure {
				return nil
			}
			return err
		}
		_ = ws.SetReadDeadline(time.Now().Add(clientTimeout))
		if kind != websocket.BinaryMessage {
			continue
		}
		if t.datagrams {
			n, err := io.ReadFull(r, buf)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				return err
			}
			if _, err := t.conn.Write(buf[:n]); err != nil {
				return err
			}
			continue
		}
		if _, err := io.CopyBuffer(t.conn, r, buf); err != nil {
			return err
		}
	}
}

// guestToClient sends what the guest's connection reads, one message per read (per datagram for
// UDP), until it ends.
func (t *tunnel) guestToClient(ws *websocket.Conn, writeMu *sync.Mutex) {
	buf := make([]byte, bufferSize)
	for {
		n, err := t.conn.Read(buf)
		if n > 0 {
			writeMu.Lock()
			_ = ws.SetWriteDeadline(time.Now().Add(writeTimeout))
			werr := ws.WriteMessage(websocket.BinaryMessage, buf[:n])
			writeMu.Unlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// keepAlive pings the client every second until done, ending the tunnel when a ping cannot be
// written.
func (t *tunnel) keepAlive(ws *websocket.Conn, writeMu *sync.Mutex, done <-chan struct{}, stop func()) {
	tick := time.NewTicker(pingInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			writeMu.Lock()
			err := ws.WriteControl(websocket.PingMessage, []byte("keep alive"), time.Now().Add(writeTimeout))
			writeMu.Unlock()
			if err != nil {
				stop()
				return
			}
		}
	}
}
