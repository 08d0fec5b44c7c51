package vmistream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// frame is a websocket frame header and payload of n bytes (masked like a client's when mask).
func frame(n int, mask bool) []byte {
	var h []byte
	switch {
	case n < 126:
		h = []byte{0x82, byte(n)}
	case n <= 0xffff:
		h = []byte{0x82, 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h = make([]byte, 10)
		h[0], h[1] = 0x82, 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
	}
	if mask {
		h[1] |= 0x80
		h = append(h, 1, 2, 3, 4)
	}
	return append(h, bytes.Repeat([]byte{'x'}, n)...)
}

// TestFrameTrackerBoundaries: written in pieces cut anywhere, the response and frames of every
// length form are followed; a boundary is seen exactly at each frame's end.
func TestFrameTrackerBoundaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	response := []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
	stream := append([]byte(nil), response...)
	ends := map[int]bool{len(stream): true}
	for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 70000, 3} {
		stream = append(stream, frame(n, n%2 == 1)...)
		ends[len(stream)] = true
	}
	for trial := 0; trial < 50; trial++ {
		var f frameTracker
		for at := 0; at < len(stream); {
			next := min(len(stream), at+1+rng.IntN(200))
			if trial%2 == 0 { // byte by byte through the headers, then big pieces
				next = min(len(stream), at+1+rng.IntN(70000))
			}
			for i := at; i < next; i++ {
				f.advance(stream[i : i+1])
				if got := f.atBoundary(); got != ends[i+1] {
					t.Fatalf("trial %d: at byte %d of %d: boundary %v, want %v", trial, i+1, len(stream), got, ends[i+1])
				}
			}
			at = next
		}
	}
	var whole frameTracker
	whole.advance(stream)
	if !whole.atBoundary() {
		t.Error("the stream written at once: no boundary at its end")
	}
}

// TestGoAwayEndsSessionsBetweenFrames: a server sending large messages without pause through
// a session is told to go away; the client reads whole messages, then the close message 1001
// with ShuttingDown, and no protocol error.
func TestGoAwayEndsSessionsBetweenFrames(t *testing.T) {
	sessions := NewSessions()
	upgrader := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(sessions.writer(w), r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		msg := bytes.Repeat([]byte{'v'}, 100_000)
		for ws.WriteMessage(websocket.BinaryMessage, msg) == nil {
		}
	}))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for i := 0; i < 3; i++ {
		if _, m, err := ws.ReadMessage(); err != nil || len(m) != 100_000 {
			t.Fatalf("message %d: %d bytes, %v", i, len(m), err)
		}
	}
	sessions.GoAway()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, m, err := ws.ReadMessage()
		if err == nil {
			if len(m) != 100_000 {
				t.Fatalf("a message cut to %d bytes", len(m))
			}
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != ShuttingDown {
			t.Fatalf("the session ended with %v, want close 1001 %q", err, ShuttingDown)
		}
		break
	}
	if !sessions.Stopping() {
		t.Error("not stopping after GoAway")
	}
}
