package importer

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compressions Import undoes, as reported in Result.Compression.
const (
	CompressionNone = "none"
	CompressionGzip = "gzip"
	CompressionXZ   = "xz"
	CompressionZstd = "zstd"
)

// Formats Import reads, as reported in Result.Format; all but FormatISO are qemu-img's names.
const (
	FormatRaw   = "raw"
	FormatISO   = "iso"
	FormatQCOW2 = "qcow2"
	FormatVMDK  = "vmdk"
	FormatVDI   = "vdi"
	FormatVHDX  = "vhdx"
	FormatVHD   = "vpc"
)

// headSize is how much of the content detection looks at: up to the ISO 9660 volume
// descriptor at 0x8001, rounded up.
const headSize = 64 << 10

// vdiSignature is VDI's signature, stored little-endian at 0x40.
const vdiSignature = 0xbeda107f

// maxZstdWindow bounds the memory a zstd frame may ask for (zstd --ultra -22 uses 128 MiB).
const maxZstdWindow = 256 << 20

// maxXZDict bounds the LZMA2 dictionary an xz stream may ask for (xz -9 uses 64 MiB): the
// decoder allocates what the stream's header says, up to 4 GiB.
const maxXZDict = 128 << 20

// xzHeadPeek covers an xz stream's header and its first block's header.
const xzHeadPeek = 12 + 1024

// xzDictSize reads the LZMA2 dictionary size from the first block header of the xz stream that
// head starts with (its stream header, 12 bytes, then the block header: size, flags, the
// optional sizes, then each filter's id, properties size and properties). ok is false when
// head holds no block header with an LZMA2 filter.
func xzDictSize(head []byte) (int64, bool) {
	if len(head) < 14 || head[12] == 0 {
		return 0, false // no block: an empty stream's index follows the header
	}
	block := head[12:]
	size := (int(block[0]) + 1) * 4
	if len(block) < size {
		return 0, false
	}
	block = block[:size]
	flags := block[1]
	pos := 2
	varint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9 && pos < len(block); i++ {
			b := block[pos]
			pos++
			v |= uint64(b&0x7f) << (7 * i)
			if b&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	for _, bit := range []byte{0x40, 0x80} { // the compressed and uncompressed sizes, if present
		if flags&bit != 0 {
			if _, ok := varint(); !ok {
				return 0, false
			}
		}
	}
	for range int(flags&0x03) + 1 {
		id, ok1 := varint()
		n, ok2 := varint()
		if !ok1 || !ok2 || pos+int(n) > len(block) {
			return 0, false
		}
		if id == 0x21 && n == 1 {
			b := block[pos]
			if b > 40 {
				return 0, false
			}
			if b == 40 {
				return 1<<32 - 1, true
			}
			return int64(2|b&1) << (b/2 + 11), true
		}
		pos += int(n)
	}
	return 0, false
}

// supportedHint ends the message for content Import does not read.
const supportedHint = "Vireo imports raw, qcow2, vmdk, vdi, vhd, vhdx and iso images, optionally compressed with gzip, xz or zstd"

// magic is a byte signature at an offset.
type magic struct {
	offset int
	sig    string
}

func (m magic) in(head []byte) bool {
	return len(head) >= m.offset+len(m.sig) && string(head[m.offset:m.offset+len(m.sig)]) == m.sig
}

var compressionMagics = []struct {
	name   string
	magics []magic // all of them
}{
	{CompressionGzip, []magic{{0, "\x1f\x8b"}}},
	{CompressionXZ, []magic{{0, "\xfd7zXZ\x00"}}},
	{CompressionZstd, []magic{{0, "\x28\xb5\x2f\xfd"}}},
	{"bzip2", []magic{{0, "BZh"}, {4, "1AY&SY"}}}, // a block size digit between them
	{"7z", []magic{{0, "7z\xbc\xaf\x27\x1c"}}},
	{"lz4", []magic{{0, "\x04\x22\x4d\x18"}}},
}

// compressionOf names the compression whose signature starts head, "" for none.
func compressionOf(head []byte) string {
	for _, c := range compressionMagics {
		if allIn(c.magics, head) {
			return c.name
		}
	}
	return ""
}

func allIn(magics []magic, head []byte) bool {
	for _, m := range magics {
		if !m.in(head) {
			return false
		}
	}
	return true
}

// decompress undoes the compression r starts with, if any, and names it. r's bytes past the
// end of the compressed stream are left to read.
func decompress(r *bufio.Reader) (string, io.ReadCloser, error) {
	head, _ := r.Peek(16)
	switch name := compressionOf(head); name {
	case "":
		return CompressionNone, io.NopCloser(r), nil
	case CompressionGzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return name, nil, fmt.Errorf("reading the gzip header: %w", err)
		}
		return name, zr, nil
	case CompressionXZ:
		head, _ := r.Peek(xzHeadPeek)
		if dict, ok := xzDictSize(head); ok && dict > maxXZDict {
			return name, nil, permanentf("the xz stream asks for a %d MiB dictionary, more than the importer's %d MiB (xz -9 uses 64 MiB)", dict>>20, maxXZDict>>20)
		}
		zr, err := xz.NewReader(r)
		if err != nil {
			return name, nil, fmt.Errorf("reading the xz header: %w", err)
		}
		return name, io.NopCloser(zr), nil
	case CompressionZstd:
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return name, nil, fmt.Errorf("reading the zstd header: %w", err)
		}
		return name, zr.IOReadCloser(), nil
	default:
		return name, nil, permanentf("unsupported format: %s-compressed data; %s", name, supportedHint)
	}
}

var formatMagics = []struct {
	format string
	magic  magic
}{
	{FormatQCOW2, magic{0, "QFI\xfb"}},
	{FormatVMDK, magic{0, "KDMV"}},
	{FormatVHDX, magic{0, "vhdxfile"}},
	{FormatVHD, magic{0, "conectix"}}, // a dynamic VHD; a fixed one has this only in its footer
	{FormatVDI, magic{0x40, string(binary.LittleEndian.AppendUint32(nil, vdiSignature))}},
}

var unsupportedMagics = []struct {
	what  string
	magic magic
}{
	{"a VMDK descriptor file, which refers to the disk's data in other files (import a monolithic VMDK instead)", magic{0, "# Disk DescriptorFile"}},
	{"a tar archive", magic{257, "ustar"}},
	{"a zip archive", magic{0, "PK\x03\x04"}},
	{"a QED image", magic{0, "QED\x00"}},
}

// detectFormat names the format of the (decompressed) content r starts with: one of the
// Format constants, FormatRaw when nothing else matches, or an "unsupported format" error.
func detectFormat(r *bufio.Reader, compression string) (string, error) {
	head, err := r.Peek(headSize)
	if err != nil && err != io.EOF {
		return "", err
	}
	for _, f := range formatMagics {
		if f.magic.in(head) {
			return f.format, nil
		}
	}
	for _, u := range unsupportedMagics {
		if u.magic.in(head) {
			return "", permanentf("unsupported format: found %s; %s", u.what, supportedHint)
		}
	}
	if inner := compressionOf(head); inner != "" && compression != CompressionNone {
		return "", permanentf("unsupported format: found %s-compressed data inside %s; only one layer of compression is supported", inner, compression)
	}
	if (magic{0x8001, "CD001"}).in(head) {
		return FormatISO, nil
	}
	return FormatRaw, nil
}
