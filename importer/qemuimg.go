package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// infoTimeout bounds `qemu-img info` on an image from outside, which reads only metadata.
const infoTimeout = 2 * time.Minute

// imageInfo is the part of `qemu-img info --output=json` the importer reads.
type imageInfo struct {
	Format          string `json:"format"`
	Filename        string `json:"filename"`
	VirtualSize     int64  `json:"virtual-size"`
	BackingFilename string `json:"backing-filename"`
	FormatSpecific  struct {
		Data struct {
			DataFile string `json:"data-file"`
			Extents  []struct {
				Filename string `json:"filename"`
			} `json:"extents"`
		} `json:"data"`
	} `json:"format-specific"`
}

// qemuImg runs qemu-img on files it is handed as open descriptors (it sees the first as
// /proc/self/fd/3, the next as /proc/self/fd/4), so that it works on exactly the files the
// importer created and never on whatever a path might lead to by then.
type qemuImg struct {
	path string
}

// fd is the path under which qemu-img sees its i-th extra file.
func fd(i int) string { return fmt.Sprintf("/proc/self/fd/%d", 3+i) }

// run runs qemu-img with args and returns its standard output; a failure carries qemu-img's
// own message.
func (q qemuImg) run(ctx context.Context, files []*os.File, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, q.path, args...)
	cmd.ExtraFiles = files
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("qemu-img %s: %w", args[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, permanentf("qemu-img %s failed: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// info describes the image f as format.
func (q qemuImg) info(ctx context.Context, f *os.File, format string) (*imageInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	out, err := q.run(ctx, []*os.File{f}, "info", "--output=json", "-f", format, fd(0))
	if err != nil {
		return nil, err
	}
	info := &imageInfo{}
	if err := json.Unmarshal(out, info); err != nil {
		return nil, fmt.Errorf("reading qemu-img info's answer: %w", err)
	}
	return info, nil
}

// check refuses an image that is not what detection said, refers to other files, or does not
// fit in usable bytes.
func (info *imageInfo) check(format string, usable int64) error {
	if info.Format != format {
		return permanentf("unsupported format: the content looks like %s but qemu-img reads it as %s", format, info.Format)
	}
	if info.BackingFilename != "" {
		return permanentf("the %s image has a backing file (%q); import a standalone image (qemu-img convert flattens it)", format, info.BackingFilename)
	}
	if info.FormatSpecific.Data.DataFile != "" {
		return permanentf("the %s image has an external data file (%q); import a standalone image", format, info.FormatSpecific.Data.DataFile)
	}
	for _, e := range info.FormatSpecific.Data.Extents {
		if e.Filename != info.Filename {
			return permanentf("the %s image refers to another file (%q) for its data; import a standalone image", format, e.Filename)
		}
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
