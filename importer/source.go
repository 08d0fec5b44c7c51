package importer

import (
	"context"
	"io"
	"os"
	"strings"
)

// A Source yields an image's bytes as the source stores them (compressed or not).
type Source interface {
	// Open starts reading the image. size is its total length in bytes, or -1 when the
	// source does not know it.
	Open(ctx context.Context) (body io.ReadCloser, size int64, err error)
	// String names the source in messages (never with credentials).
	String() string
}

// BlankSource is no data at all: the import creates an empty (all-zero, sparse) disk of the
// volume's usable size, like CDI's blank DataVolume source.
type BlankSource struct{}

// Open returns an empty stream.
func (BlankSource) Open(context.Context) (io.ReadCloser, int64, error) {
	return io.NopCloser(strings.NewReader("")), 0, nil
}

func (BlankSource) String() string { return "blank" }

// FileSource reads the image from a local file (a path in the importer's own file system,
// such as an uploaded file).
type FileSource struct {
	Path string
}

// Open opens the file; its size is known when it is a regular file.
func (s FileSource) Open(context.Context) (io.ReadCloser, int64, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, 0, permanentf("opening the source file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, permanentf("opening the source file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return f, -1, nil
	}
	return f, st.Size(), nil
}

func (s FileSource) String() string { return "file " + s.Path }
