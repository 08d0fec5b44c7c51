package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// FuzzDetect feeds arbitrary bytes to the importer's detection, as a source's first bytes:
// decompression (gzip, xz, zstd, none), then format detection, then a bounded read of the
// content. Nothing may panic, and a small input may not expand without bound in memory.
func FuzzDetect(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("QFI\xfb\x00\x00\x00\x03"))
	_ = zw.Close()
	for _, seed := range [][]byte{
		[]byte("QFI\xfb\x00\x00\x00\x03"), []byte("KDMV"), []byte("vhdxfile"), []byte("conectix"),
		gz.Bytes(), []byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46"), []byte("\x28\xb5\x2f\xfd\x04\x00"),
		[]byte("# Disk DescriptorFile"), []byte("PK\x03\x04"), {},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compression, rc, err := decompress(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		defer rc.Close()
		content := bufio.NewReaderSize(rc, headSize)
		if _, err := detectFormat(content, compression); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(content, 4<<20))
	})
}
