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
	if got := closeReason(t, ws); got != nodeagentapi.CloseVMIMigrated {
		t.Errorf("close message %q, want %q", got, nodeagentapi.CloseVMIMigrated)
	}
}

// closeReason reads until the server's close frame and returns its text.
func closeReason(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Text
			}
			t.Fatalf("no close frame: %v", err)
		}
	}
}
