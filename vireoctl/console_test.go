package vireoctl

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// echoServer is a websocket server that records what it receives.
func echoServer(t *testing.T, got chan<- string) *websocket.Conn {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{subprotocol}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var all strings.Builder
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				got <- all.String()
				return
			}
			all.Write(data)
		}
	}))
	t.Cleanup(srv.Close)
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestPumpInputEscapeOnlyInRawMode(t *testing.T) {
	for _, c := range []struct {
		raw     bool
		wantErr error
		want    string
	}{{true, errEscape, "abc"}, {false, io.EOF, "abc\x1ddef"}} {
		got := make(chan string, 1)
		ws := echoServer(t, got)
		err := pumpInput(strings.NewReader("abc\x1ddef"), ws, c.raw)
		if !errors.Is(err, c.wantErr) {
			t.Errorf("raw=%v: %v, want %v", c.raw, err, c.wantErr)
		}
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		if s := <-got; s != c.want {
			t.Errorf("raw=%v: sent %q, want %q", c.raw, s, c.want)
		}
		ws.Close()
	}
}

func TestSessionEndedSaysWhy(t *testing.T) {
	err := sessionEnded(&websocket.CloseError{Code: websocket.CloseNormalClosure, Text: "console session taken over"})
	if !strings.Contains(err.Error(), "taken over") {
		t.Errorf("%v", err)
	}
	if err := sessionEnded(io.ErrUnexpectedEOF); !strings.Contains(err.Error(), "connection was lost") {
		t.Errorf("%v", err)
	}
	if got := serverMessage([]byte(`{"kind":"Status","message":"VMI ns/x is not running"}`)); got != "VMI ns/x is not running" {
		t.Errorf("serverMessage: %q", got)
	}
}
