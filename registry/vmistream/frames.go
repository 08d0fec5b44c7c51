package vmistream

import "encoding/binary"

// frameTracker follows the server's side of a relayed websocket connection as it is written
// (the HTTP response, then frames) to tell when a whole number of frames has gone out: only
// then may a frame of vireo-apiserver's own be put in between.
type frameTracker struct {
	// responseEnd counts the bytes of "\r\n\r\n" matched so far; 4 once the response's
	// header is written.
	responseEnd int
	// header holds the bytes of the frame header being written; remaining counts the payload
	// bytes of the current frame still to come.
	header    []byte
	remaining uint64
}

// advance takes the bytes written next.
func (f *frameTracker) advance(p []byte) {
	for len(p) > 0 {
		switch {
		case f.responseEnd < 4:
			f.responseEnd = nextResponseEnd(f.responseEnd, p[0])
			p = p[1:]
		case f.remaining > 0:
			n := uint64(len(p))
			if n > f.remaining {
				n = f.remaining
			}
			f.remaining -= n
			p = p[n:]
		default:
			f.header = append(f.header, p[0])
			p = p[1:]
			if need := frameHeaderLen(f.header); need > 0 && len(f.header) == need {
				f.remaining = framePayloadLen(f.header)
				f.header = f.header[:0]
			}
		}
	}
}

// atBoundary reports whether the response's header and only whole frames have been written.
func (f *frameTracker) atBoundary() bool {
	return f.responseEnd == 4 && len(f.header) == 0 && f.remaining == 0
}

// nextResponseEnd is the count of "\r\n\r\n" matched after byte b, matched bytes before it.
func nextResponseEnd(matched int, b byte) int {
	const end = "\r\n\r\n"
	switch {
	case b == end[matched]:
		return matched + 1
	case b == '\r':
		return 1
	default:
		return 0
	}
}

// frameHeaderLen is the length of the frame header that starts with h, or 0 while h is too
// short to tell (RFC 6455 5.2: 2 bytes, the extended length's 2 or 8, the mask's 4).
func frameHeaderLen(h []byte) int {
	if len(h) < 2 {
		return 0
	}
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 {
		n += 4
	}
	return n
}

// framePayloadLen is the payload length of the whole frame header h.
func framePayloadLen(h []byte) uint64 {
	switch l := h[1] & 0x7f; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return binary.BigEndian.Uint64(h[2:10])
	default:
		return uint64(l)
	}
}

// closeFrame is an unmasked close frame (a server's) with code and reason, the reason cut to
// fit a control frame's 125 bytes.
func closeFrame(code uint16, reason string) []byte {
	if len(reason) > 123 {
		reason = reason[:123]
	}
	frame := []byte{0x88, byte(2 + len(reason)), byte(code >> 8), byte(code)}
	return append(frame, reason...)
}
