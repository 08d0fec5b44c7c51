package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// rfbClient is the least of an RFB 3.8 client that measures a display's throughput: no
// authentication, a shared session, raw encoding only, whole-screen updates.
type rfbClient struct {
	r             *bufio.Reader
	w             io.Writer
	width, height uint16
	bytesPerPixel int
}

// rfbHandshake does the version, security and init exchanges and asks for raw encoding.
func rfbHandshake(rw io.ReadWriter) (*rfbClient, error) {
	c := &rfbClient{r: bufio.NewReaderSize(rw, 256<<10), w: rw}
	version := make([]byte, 12)
	if _, err := io.ReadFull(c.r, version); err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}
	if string(version) != "RFB 003.008\n" {
		return nil, fmt.Errorf("server version %q, want RFB 003.008", version)
	}
	if _, err := c.w.Write(version); err != nil {
		return nil, err
	}
	var n uint8
	if err := binary.Read(c.r, binary.BigEndian, &n); err != nil || n == 0 {
		return nil, fmt.Errorf("security types: %d, %v", n, err)
	}
	types := make([]byte, n)
	if _, err := io.ReadFull(c.r, types); err != nil {
		return nil, err
	}
	if _, err := c.w.Write([]byte{1}); err != nil { // None
		return nil, err
	}
	var result uint32
	if err := binary.Read(c.r, binary.BigEndian, &result); err != nil || result != 0 {
		return nil, fmt.Errorf("security result %d, %v (offered %v)", result, err, types)
	}
	if _, err := c.w.Write([]byte{1}); err != nil { // ClientInit: shared
		return nil, err
	}
	var init struct {
		Width, Height uint16
		Format        [16]byte
		NameLength    uint32
	}
	if err := binary.Read(c.r, binary.BigEndian, &init); err != nil {
		return nil, fmt.Errorf("server init: %w", err)
	}
	if _, err := c.r.Discard(int(init.NameLength)); err != nil {
		return nil, err
	}
	c.width, c.height, c.bytesPerPixel = init.Width, init.Height, int(init.Format[0])/8
	// SetEncodings: raw (0) only.
	if _, err := c.w.Write([]byte{2, 0, 0, 1, 0, 0, 0, 0}); err != nil {
		return nil, err
	}
	return c, nil
}

// fullUpdate asks for the whole screen (not incremental) and reads the update; it returns the
// bytes the update took on the wire.
func (c *rfbClient) fullUpdate() (int, error) {
	req := []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(req[6:], c.width)
	binary.BigEndian.PutUint16(req[8:], c.height)
	if _, err := c.w.Write(req); err != nil {
		return 0, err
	}
	for {
		typ, err := c.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch typ {
		case 0: // FramebufferUpdate
			return c.readRectangles()
		case 2: // Bell
		case 3: // ServerCutText
			var hdr struct {
				Pad    [3]byte
				Length uint32
			}
			if err := binary.Read(c.r, binary.BigEndian, &hdr); err != nil {
				return 0, err
			}
			if _, err := c.r.Discard(int(hdr.Length)); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("unexpected server message type %d", typ)
		}
	}
}

func (c *rfbClient) readRectangles() (int, error) {
	var hdr struct {
		Pad   byte
		Rects uint16
	}
	if err := binary.Read(c.r, binary.BigEndian, &hdr); err != nil {
		return 0, err
	}
	total := 4
	for range hdr.Rects {
		var rect struct {
			X, Y, W, H uint16
			Encoding   int32
		}
		if err := binary.Read(c.r, binary.BigEndian, &rect); err != nil {
			return 0, err
		}
		if rect.Encoding != 0 {
			return 0, fmt.Errorf("rectangle encoding %d, asked for raw only", rect.Encoding)
		}
		size := int(rect.W) * int(rect.H) * c.bytesPerPixel
		if _, err := c.r.Discard(size); err != nil {
			return 0, err
		}
		total += 12 + size
	}
	return total, nil
}
