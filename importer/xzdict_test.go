package importer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// TestXZDictionaryCap: the dictionary an xz stream's first block asks for is read from its
// header; a stream asking for more than the cap is refused before the decoder allocates it,
// naming the size, and xz -9's 64 MiB passes.
func TestXZDictionaryCap(t *testing.T) {
	payload := strings.Repeat("vireo", 1000)
	compress := func(dict int) []byte {
		var buf bytes.Buffer
		w, err := xz.WriterConfig{DictCap: dict}.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, payload); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, dict := range []int64{1 << 20, 64 << 20, 192 << 20} {
		data := compress(int(dict))
		if got, ok := xzDictSize(data); !ok || got != dict {
			t.Errorf("dictionary %d: read %d (%t)", dict, got, ok)
		}
		_, rc, err := decompress(bufio.NewReader(bytes.NewReader(data)))
		if dict > maxXZDict {
			var e *Error
			if err == nil || !errors.As(err, &e) || e.Transient || !strings.Contains(err.Error(), "192 MiB dictionary") {
				t.Errorf("dictionary %d: %v, want a permanent refusal naming the dictionary", dict, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("dictionary %d: %v", dict, err)
		}
		out, err := io.ReadAll(rc)
		if err != nil || string(out) != payload {
			t.Errorf("dictionary %d: read %d bytes, %v", dict, len(out), err)
		}
	}
	if _, ok := xzDictSize([]byte("short")); ok {
		t.Error("a short head gave a dictionary size")
	}
}
