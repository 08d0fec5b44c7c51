package importer

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// sparseBlock is the unit of copySparse: an all-zero block of this size becomes a hole.
const sparseBlock = 64 << 10

var zeroBlock = make([]byte, sparseBlock)

// errOverLimit says that the content went past copySparse's limit.
var errOverLimit = errors.New("over the limit")

// copySparse copies r into f from offset 0, seeking over all-zero blocks so that they stay
// holes, and sets f's size to the number of bytes copied, which it returns. It stops with
// errOverLimit as soon as r yields more than limit bytes. Failures to write are permanent
// *Errors; r's errors are returned as they are.
func copySparse(f *os.File, r io.Reader, limit int64) (int64, error) {
	buf := make([]byte, sparseBlock)
	var off int64
	for {
		n, err := fill(r, buf)
		if off+int64(n) > limit {
			return off + int64(n), errOverLimit
		}
		if n > 0 && !bytes.Equal(buf[:n], zeroBlock[:n]) {
			if _, werr := f.WriteAt(buf[:n], off); werr != nil {
				return off, permanentf("writing %s: %w", f.Name(), werr)
			}
		}
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return off, err
		}
	}
	if err := f.Truncate(off); err != nil {
		return off, permanentf("writing %s: %w", f.Name(), err)
	}
	return off, nil
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull it returns r's error,
// io.EOF included, as it is.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
