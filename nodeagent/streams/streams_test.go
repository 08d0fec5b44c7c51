package streams

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// TestSessionEndedBeforeUpgradeKeepsItsReason: a session ended before its websocket was ready
// (here, before serve runs at all) still tells the client why, not a generic "stopped".
func TestSessionEndedBeforeUpgradeKeepsItsReason(t *testing.T) {
	s := New(time.Second, nodedirs.Dirs{}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, prev, err := s.reserve(streamKey{namespace: "ns", name: "vm1", kind: nodeagentapi.StreamConsole}, false, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		st.end(websocket.CloseNormalClosure, nodeagentapi.CloseVMIMigrated)
		s.serve(w, r, st, prev, nodeagentapi.CloseTakenOver)
	}))
	defer srv.Close()
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer ws.Close()
	// The server sends nothing but the close frame.
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = ws.ReadMessage()
	if ce := (*websocket.CloseError)(nil); !errors.As(err, &ce) || ce.Text != nodeagentapi.CloseVMIMigrated {
		t.Errorf("the session ended with %v, want the close message %q", err, nodeagentapi.CloseVMIMigrated)
	}
}
