package vireoctl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

func TestReadInputEscapeOnlyInRawMode(t *testing.T) {
	for _, c := range []struct {
		raw     bool
		wantErr error
		want    string
	}{{true, errEscape, "abc"}, {false, io.EOF, "abc\x1ddef"}} {
		input := make(chan []byte)
		end := make(chan error, 1)
		go readInput(strings.NewReader("abc\x1ddef"), c.raw, input, end)
		var got strings.Builder
		var err error
	loop:
		for {
			select {
			case chunk := <-input:
				got.Write(chunk)
			case err = <-end:
				break loop
			}
		}
		if !errors.Is(err, c.wantErr) || got.String() != c.want {
			t.Errorf("raw=%v: read %q, ended %v; want %q, %v", c.raw, got.String(), err, c.want, c.wantErr)
		}
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
	// A server going away says why, and the session is opened again (a *lostError).
	var lost *lostError
	if err := sessionEnded(&websocket.CloseError{Code: websocket.CloseGoingAway, Text: "vireo-apiserver is shutting down: connect again"}); !errors.As(err, &lost) ||
		!strings.Contains(err.Error(), "interrupted: vireo-apiserver is shutting down") {
		t.Errorf("going away: %v", err)
	}
	if err := sessionEnded(&websocket.CloseError{Code: websocket.CloseNormalClosure, Text: "the VMI stopped"}); errors.As(err, &lost) {
		t.Errorf("a VMI that stopped is reconnected to: %v", err)
	}
	if got := serverMessage([]byte(`{"kind":"Status","message":"VMI ns/x is not running"}`)); got != "VMI ns/x is not running" {
		t.Errorf("serverMessage: %q", got)
	}
}

// TestConsoleReconnectsWhenTheConnectionDrops: a connection that breaks without a close message
// (kube-apiserver restarting) is opened again, and input goes on to the new one.
func TestConsoleReconnectsWhenTheConnectionDrops(t *testing.T) {
	var conns atomic.Int32
	up := websocket.Upgrader{Subprotocols: []string{subprotocol}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		first := conns.Add(1) == 1
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if first {
				ws.UnderlyingConn().Close() // dropped, no close frame
				return
			}
			if err := ws.WriteMessage(websocket.BinaryMessage, data); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	inR, inW := io.Pipe()
	var out, errOut syncBuffer
	o := &consoleOptions{timeout: 10 * time.Second, drain: 300 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		done <- o.run(context.Background(), &target{cfg: &rest.Config{Host: srv.URL}, namespace: "ns"}, "vm",
			genericiooptions.IOStreams{In: inR, Out: &out, ErrOut: &errOut})
	}()
	if _, err := inW.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return conns.Load() == 2, nil
	}); err != nil {
		t.Fatalf("no second connection; stderr %q", errOut.String())
	}
	if _, err := inW.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("console: %v (stderr %q)", err, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the console did not end")
	}
	if !strings.Contains(out.String(), "two") || !strings.Contains(errOut.String(), "reconnecting") {
		t.Errorf("output %q, stderr %q", out.String(), errOut.String())
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
