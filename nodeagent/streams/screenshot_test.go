package streams

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeRFB plays the server side of RFB 3.8 for a 4x2 display whose pixels are (x*60, y*100, 7).
func fakeRFB(t *testing.T, c net.Conn) { fakeRFBOf(t, c, 4, 2) }

// fakeRFBOf announces a w x h display; it sends the 4x2 update only when that is the display.
func fakeRFBOf(t *testing.T, c net.Conn, w, h uint16) {
	defer c.Close()
	must := func(err error) {
		if err != nil {
			t.Errorf("fake RFB server: %v", err)
		}
	}
	_, err := c.Write([]byte("RFB 003.008\n"))
	must(err)
	buf := make([]byte, 64)
	_, err = io.ReadFull(c, buf[:12])
	must(err)
	_, err = c.Write([]byte{1, 1}) // one security type: None
	must(err)
	_, err = io.ReadFull(c, buf[:1])
	must(err)
	_, err = c.Write([]byte{0, 0, 0, 0}) // OK
	must(err)
	_, err = io.ReadFull(c, buf[:1]) // ClientInit
	must(err)
	var init bytes.Buffer
	_ = binary.Write(&init, binary.BigEndian, [2]uint16{w, h})
	init.Write(make([]byte, 16))
	_ = binary.Write(&init, binary.BigEndian, uint32(1))
	init.WriteString("t")
	_, err = c.Write(init.Bytes())
	must(err)
	if w != 4 || h != 2 {
		return
	}
	_, err = io.ReadFull(c, buf[:20+8+12+10]) // pixel format, encodings, two pointer events, update request
	must(err)
	var upd bytes.Buffer
	upd.Write([]byte{0, 0, 0, 1})
	_ = binary.Write(&upd, binary.BigEndian, [4]uint16{0, 0, 4, 2})
	_ = binary.Write(&upd, binary.BigEndian, int32(0))
	for y := 0; y < 2; y++ {
		for x := 0; x < 4; x++ {
			upd.Write([]byte{7, byte(y * 100), byte(x * 60), 0}) // B, G, R, pad
		}
	}
	_, err = c.Write(upd.Bytes())
	must(err)
}

func TestRFBScreenshot(t *testing.T) {
	client, server := net.Pipe()
	go fakeRFB(t, server)
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	img, err := rfbScreenshot(client, true)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 4 || b.Dy() != 2 {
		t.Fatalf("size %v", b)
	}
	for y := 0; y < 2; y++ {
		for x := 0; x < 4; x++ {
			c := img.RGBAAt(x, y)
			if c.R != byte(x*60) || c.G != byte(y*100) || c.B != 7 || c.A != 255 {
				t.Errorf("pixel %d,%d = %v", x, y, c)
			}
		}
	}
}

// TestRFBScreenshotRefusesHugeDisplay: a display larger than maxScreen (the guest sets its
// mode) is refused before a frame of its size is allocated.
func TestRFBScreenshotRefusesHugeDisplay(t *testing.T) {
	client, server := net.Pipe()
	go fakeRFBOf(t, server, maxScreen+1, 16)
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	if img, err := rfbScreenshot(client, true); err == nil || !strings.Contains(err.Error(), "unexpected display") {
		t.Errorf("a %dx16 display: %v, %v; want a refusal", maxScreen+1, img, err)
	}
}
