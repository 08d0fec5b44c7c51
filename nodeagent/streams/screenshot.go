package streams

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/vireo-dev/vireo/launcher/protocol"
)

// maxScreen bounds the display a screenshot accepts (width and height): the guest sets its
// display mode, and a screenshot allocates one frame of it (at most 4096 x 4096 x 4 bytes,
// 64 MiB; QEMU's standard VGA stops at 2560 x 1600 with its default 16 MiB of video memory).
const maxScreen = 4096

// screenshotTimeout bounds one screenshot: connect, handshake, one full update.
const screenshotTimeout = 20 * time.Second

// serveScreenshot answers GET .../vnc/screenshot with a PNG of the VMI's display. It opens its
// own shared RFB connection, so an open VNC session is neither replaced nor disturbed.
func (s *Server) serveScreenshot(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	moveCursor := false
	if v := r.URL.Query().Get("moveCursor"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			http.Error(w, fmt.Sprintf("moveCursor=%q: want true or false", v), http.StatusBadRequest)
			return
		}
		moveCursor = b
	}
	podUID, herr := s.launchers.Running(ns, name)
	if herr != nil {
		herr.Write(w)
		return
	}
	conn, err := s.dirs.DialSocket(r.Context(), podUID, protocol.VNCSocket)
	if err != nil {
		http.Error(w, fmt.Sprintf("the display of VMI %s/%s is not reachable on this node: %v", ns, name, err), http.StatusServiceUnavailable)
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(screenshotTimeout))
	img, err := rfbScreenshot(conn, moveCursor)
	if err != nil {
		http.Error(w, fmt.Sprintf("taking a screenshot of VMI %s/%s: %v", ns, name, err), http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// rfbScreenshot speaks RFB 3.8 as a shared client without authentication, asks for 32-bit
// true colour in raw encoding and returns the first full-screen update as an image.
func rfbScreenshot(c io.ReadWriter, moveCursor bool) (*image.RGBA, error) {
	return rfbScreenshotWithin(c, moveCursor, maxScreen)
}

// rfbScreenshotWithin is rfbScreenshot for displays of at most maxSide pixels a side.
func rfbScreenshotWithin(c io.ReadWriter, moveCursor bool, maxSide uint16) (*image.RGBA, error) {
	r := bufio.NewReader(c)
	version := make([]byte, 12)
	if _, err := io.ReadFull(r, version); err != nil {
		return nil, fmt.Errorf("reading the RFB version: %w", err)
	}
	if !bytes.HasPrefix(version, []byte("RFB 003.")) {
		return nil, fmt.Errorf("not an RFB server: %q", version)
	}
	if _, err := c.Write([]byte("RFB 003.008\n")); err != nil {
		return nil, err
	}
	var n uint8
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	types := make([]byte, n)
	if _, err := io.ReadFull(r, types); err != nil {
		return nil, err
	}
	if !bytes.Contains(types, []byte{1}) {
		return nil, fmt.Errorf("the VNC server wants authentication (security types %v)", types)
	}
	var result uint32
	if _, err := c.Write([]byte{1}); err != nil {
		return nil, err
	}
	if err := binary.Read(r, binary.BigEndian, &result); err != nil || result != 0 {
		return nil, fmt.Errorf("RFB security handshake failed (%d, %v)", result, err)
	}
	if _, err := c.Write([]byte{1}); err != nil { // ClientInit: shared
		return nil, err
	}
	var init struct {
		W, H    uint16
		Format  [16]byte
		NameLen uint32
	}
	if err := binary.Read(r, binary.BigEndian, &init); err != nil {
		return nil, fmt.Errorf("reading ServerInit: %w", err)
	}
	if init.W == 0 || init.H == 0 || init.W > maxSide || init.H > maxSide || init.NameLen > 4096 {
		return nil, fmt.Errorf("unexpected display %dx%d (name of %d bytes)", init.W, init.H, init.NameLen)
	}
	if _, err := io.CopyN(io.Discard, r, int64(init.NameLen)); err != nil {
		return nil, err
	}
	if err := requestFullUpdate(c, init.W, init.H, moveCursor); err != nil {
		return nil, err
	}
	return readUpdate(r, init.W, init.H)
}

// requestFullUpdate sets 32-bit little-endian true colour (blue in the lowest byte) and raw
// encoding, optionally moves the pointer (wakes a blanked screen), and asks for the whole screen.
func requestFullUpdate(c io.Writer, w, h uint16, moveCursor bool) error {
	var msg bytes.Buffer
	msg.Write([]byte{0, 0, 0, 0})                                     // SetPixelFormat
	msg.Write([]byte{32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0}) // bpp, depth, little-endian, true colour, maxima, shifts
	msg.Write([]byte{0, 0, 0})
	msg.Write([]byte{2, 0, 0, 1, 0, 0, 0, 0}) // SetEncodings: raw only
	if moveCursor {
		msg.Write([]byte{5, 0, 0, 1, 0, 1}) // PointerEvent to (1,1)
		msg.Write([]byte{5, 0, 0, 0, 0, 0}) // and back to (0,0)
	}
	msg.Write([]byte{3, 0, 0, 0, 0, 0}) // FramebufferUpdateRequest, not incremental, from (0,0)
	_ = binary.Write(&msg, binary.BigEndian, [2]uint16{w, h})
	_, err := c.Write(msg.Bytes())
	return err
}

// readUpdate reads server messages until a framebuffer update, and paints its raw rectangles.
func readUpdate(r *bufio.Reader, w, h uint16) (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, int(w), int(h)))
	for {
		typ, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		switch typ {
		case 0: // FramebufferUpdate
			return img, paintRects(r, img)
		case 2: // Bell
		case 3: // ServerCutText
			var hdr struct {
				Pad [3]byte
				Len uint32
			}
			if err := binary.Read(r, binary.BigEndian, &hdr); err != nil {
				return nil, err
			}
			if _, err := io.CopyN(io.Discard, r, int64(hdr.Len)); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected RFB server message %d", typ)
		}
	}
}

func paintRects(r *bufio.Reader, img *image.RGBA) error {
	var hdr struct {
		Pad   byte
		Count uint16
	}
	if err := binary.Read(r, binary.BigEndian, &hdr); err != nil {
		return err
	}
	b := img.Bounds()
	for i := 0; i < int(hdr.Count); i++ {
		var rect struct {
			X, Y, W, H uint16
			Encoding   int32
		}
		if err := binary.Read(r, binary.BigEndian, &rect); err != nil {
			return err
		}
		if rect.Encoding != 0 {
			return fmt.Errorf("unexpected encoding %d", rect.Encoding)
		}
		if int(rect.X)+int(rect.W) > b.Dx() || int(rect.Y)+int(rect.H) > b.Dy() {
			return fmt.Errorf("rectangle %dx%d at %d,%d outside the %dx%d display", rect.W, rect.H, rect.X, rect.Y, b.Dx(), b.Dy())
		}
		row := make([]byte, int(rect.W)*4)
		for y := 0; y < int(rect.H); y++ {
			if _, err := io.ReadFull(r, row); err != nil {
				return err
			}
			off := img.PixOffset(int(rect.X), int(rect.Y)+y)
			for x := 0; x < int(rect.W); x++ {
				p := row[x*4 : x*4+4] // B, G, R, unused
				img.Pix[off+x*4], img.Pix[off+x*4+1], img.Pix[off+x*4+2], img.Pix[off+x*4+3] = p[2], p[1], p[0], 255
			}
		}
	}
	return nil
}
