// Package qemuimg runs qemu-img (and tools like it) the way Vireo's launcher and importer both
// must: on files handed over as open descriptors, never on paths, so that the tool works on
// exactly the file Vireo opened and checked; and it reads `qemu-img info`, including every
// file an image refers to besides itself, which neither binary lets QEMU follow.
package qemuimg

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// FD is the path under which a child process sees its i-th extra file (the first is
// descriptor 3).
func FD(i int) string { return fmt.Sprintf("/proc/self/fd/%d", 3+i) }

// RunError is a tool that failed: its command line, how it ended and what it wrote to
// standard error.
type RunError struct {
	Tool   string
	Args   []string
	Err    error
	Stderr string
}

func (e *RunError) Error() string {
	return fmt.Sprintf("%s %s: %v: %s", e.Tool, strings.Join(e.Args, " "), e.Err, e.Stderr)
}

func (e *RunError) Unwrap() error { return e.Err }

// Run runs tool with args, handing it files as descriptors 3, 4, ... (see FD), and returns its
// standard output; a failure is a *RunError.
func Run(ctx context.Context, tool string, files []*os.File, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.ExtraFiles = files
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, &RunError{Tool: tool, Args: args, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// Info is the part of `qemu-img info --output=json` Vireo reads.
type Info struct {
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

// ReadInfo runs `qemu-img info` (binary qemuImg) on the open image f: in format, or detected
// from the contents when format is "" (never from a name); without taking the image's lock
// when shared (another QEMU may have it open, as on a migration's source). qemu-img info opens
// no backing file.
func ReadInfo(ctx context.Context, qemuImg string, f *os.File, format string, shared bool) (*Info, error) {
	args := []string{"info", "--output=json"}
	if format != "" {
		args = append(args, "-f", format)
	}
	if shared {
		args = append(args, "-U")
	}
	out, err := Run(ctx, qemuImg, []*os.File{f}, append(args, FD(0))...)
	if err != nil {
		return nil, err
	}
	return ParseInfo(out)
}

// ParseInfo reads the output of `qemu-img info --output=json`. Its strings (file names) are the
// image author's, escaped by qemu-img.
func ParseInfo(out []byte) (*Info, error) {
	info := &Info{}
	if err := json.Unmarshal(out, info); err != nil {
		return nil, fmt.Errorf("reading qemu-img info's answer: %w", err)
	}
	return info, nil
}

// OtherFile is the first file the image refers to besides itself, and what kind of reference
// it is ("backing file", "external data file", "extent"); "", "" for a standalone image. Such
// references are paths the image's author chose, which QEMU would open on the node.
func (i *Info) OtherFile() (kind, name string) {
	switch {
	case i.BackingFilename != "":
		return "backing file", i.BackingFilename
	case i.FormatSpecific.Data.DataFile != "":
		return "external data file", i.FormatSpecific.Data.DataFile
	}
	for _, e := range i.FormatSpecific.Data.Extents {
		if e.Filename != i.Filename {
			return "extent", e.Filename
		}
	}
	return "", ""
}
