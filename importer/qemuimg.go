package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vireo-dev/vireo/internal/qemuimg"
)

// infoTimeout bounds `qemu-img info` on an image from outside, which reads only metadata.
const infoTimeout = 2 * time.Minute

// imageInfo is what qemu-img info says of an image.
type imageInfo = qemuimg.Info

// qemuImg runs qemu-img on files it is handed as open descriptors (it sees the first as
// /proc/self/fd/3, the next as /proc/self/fd/4), so that it works on exactly the files the
// importer created and never on whatever a path might lead to by then.
type qemuImg struct {
	path string
}

// fd is the path under which qemu-img sees its i-th extra file.
func fd(i int) string { return qemuimg.FD(i) }

// run runs qemu-img with args and returns its standard output; a failure carries qemu-img's
// own message.
func (q qemuImg) run(ctx context.Context, files []*os.File, args ...string) ([]byte, error) {
	out, err := qemuimg.Run(ctx, q.path, files, args...)
	return out, q.failure(ctx, args[0], err)
}

// failure is the importer's error for qemu-img's subcommand that failed with err (nil: none).
func (q qemuImg) failure(ctx context.Context, subcommand string, err error) error {
	var re *qemuimg.RunError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("qemu-img %s: %w", subcommand, ctx.Err())
	case errors.As(err, &re) && re.Stderr != "":
		return permanentf("qemu-img %s failed: %s", subcommand, re.Stderr)
	}
	return permanentf("qemu-img %s failed: %v", subcommand, err)
}

// info describes the image f as format.
func (q qemuImg) info(ctx context.Context, f *os.File, format string) (*imageInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	info, err := qemuimg.ReadInfo(ctx, q.path, f, format, false)
	if err != nil {
		var re *qemuimg.RunError
		if errors.As(err, &re) {
			return nil, q.failure(ctx, "info", err)
		}
		return nil, err
	}
	return info, nil
}

// checkImage refuses an image that is not what detection said, refers to other files, or does
// not fit in usable bytes.
func checkImage(info *imageInfo, format string, usable int64) error {
	if info.Format != format {
		return permanentf("unsupported format: the content looks like %s but qemu-img reads it as %s", format, info.Format)
	}
	switch kind, other := info.OtherFile(); kind {
	case "":
	case "backing file":
		return permanentf("the %s image has a backing file (%q); import a standalone image (qemu-img convert flattens it)", format, other)
	case "external data file":
		return permanentf("the %s image has an external data file (%q); import a standalone image", format, other)
	default:
		return permanentf("the %s image refers to another file (%q) for its data; import a standalone image", format, other)
	}
	if info.VirtualSize > usable {
		return tooLarge("virtual size", info.VirtualSize, usable)
	}
	if info.VirtualSize <= 0 {
		return permanentf("the %s image has a virtual size of %d bytes", format, info.VirtualSize)
	}
	return nil
}

// convert writes the image src (in format) as raw into dst, which must be all zeros and at
// least as large as the image's virtual size, leaving holes for zero runs of 4 KiB or more.
func (q qemuImg) convert(ctx context.Context, src *os.File, format string, dst *os.File) error {
	_, err := q.run(ctx, []*os.File{src, dst},
		"convert", "-n", "--target-is-zero", "-f", format, "-O", FormatRaw, "-S", "4k", fd(0), fd(1))
	return err
}

// tooLarge is the error for an image that does not fit the volume.
func tooLarge(what string, size, usable int64) error {
	return permanentf("the image is larger than the volume: %s %d bytes, usable %d bytes", what, size, usable)
}
