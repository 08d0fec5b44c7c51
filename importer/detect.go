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
