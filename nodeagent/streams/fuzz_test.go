package streams

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// rfbPeer is the node agent's side of a VNC connection to a server that says script: what the
// node agent writes is dropped.
type rfbPeer struct{ io.Reader }

func (rfbPeer) Write(p []byte) (int, error) { return len(p), nil }

// FuzzRFBScreenshot plays arbitrary RFB servers to the screenshot client: the VNC socket is the
// launcher's QEMU in the tenant's Pod, so it is not trusted. The client never panics, and an
// image it returns has the size the server announced.
func FuzzRFBScreenshot(f *testing.F) {
	for _, size := range [][2]uint16{{4, 2}, {3, 3}, {0, 1}, {100, 1}} {
		f.Add(rfbScript(size[0], size[1]))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		img, err := rfbScreenshotWithin(rfbPeer{bytes.NewReader(script)}, true, 64)
		if err != nil {
			return
		}
		var w, h uint16
		if len(script) >= 28 {
			// The display size follows the version (12 bytes), the security types (1 + n), the
			// security result (4).
			off := 12 + 1 + int(script[12]) + 4
			if off+4 <= len(script) {
				w, h = binary.BigEndian.Uint16(script[off:]), binary.BigEndian.Uint16(script[off+2:])
			}
		}
		if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
			t.Fatalf("image %v for a %dx%d display", b, w, h)
		}
	})
}

// rfbScript is what a server announcing a w x h display sends: the handshake, a bell, and a raw
// update of the whole display.
func rfbScript(w, h uint16) []byte {
	var out bytes.Buffer
	out.WriteString("RFB 003.008\n")
	out.Write([]byte{1, 1, 0, 0, 0, 0})
	_ = binary.Write(&out, binary.BigEndian, [2]uint16{w, h})
	out.Write(make([]byte, 16))
	_ = binary.Write(&out, binary.BigEndian, uint32(1))
	out.WriteString("t")
	out.Write([]byte{2, 0, 0, 0, 1})
	_ = binary.Write(&out, binary.BigEndian, [4]uint16{0, 0, w, h})
	_ = binary.Write(&out, binary.BigEndian, int32(0))
	out.Write(bytes.Repeat([]byte{7, 100, 60, 0}, int(w)*int(h)))
	return out.Bytes()
}
