// Package importer fills a volume with a disk image, as CDI's importer fills a DataVolume's
// PersistentVolumeClaim: it reads the image from a source (an http(s) URL, a local file, or
// nothing for a blank disk), verifies an optional checksum over the bytes as received, undoes
// one layer of gzip, xz or zstd compression, detects the image's format from its content,
// converts formats other than raw with qemu-img, and leaves a sparse raw disk.img of the
// volume's usable size in the target directory, or nothing new at all when it fails.
package importer

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

// DefaultFilesystemOverhead is the fraction of a Filesystem-mode volume's capacity that
// KubeVirt and CDI leave to the file system by default.
const DefaultFilesystemOverhead = 0.055

// Scratch files may exceed the usable size by this much plus a 64th of it for the image
// format's own metadata (a VHDX's fixed regions take 8 MiB, a stream-optimized VMDK of
// incompressible data grows by about 1%); an image still larger is refused as it is written,
// before it fills the scratch space.
const scratchFixedMargin = 16 << 20

// maxTrailing bounds the bytes that may follow the end of a compressed stream (padding).
const maxTrailing = 1 << 20

// Options describe one import.
type Options struct {
	// Source yields the image: an *HTTPSource, a FileSource or a BlankSource.
	Source Source
	// Checksum, if set, is "<md5|sha1|sha256|sha512>:<hex>", the expected digest of the
	// bytes as the source stores them (before decompression).
	Checksum string
	// TargetDir is the volume's mount point, where disk.img is written.
	TargetDir string
	// ScratchDir holds an image in a format other than raw while qemu-img converts it.
	ScratchDir string
	// Capacity is the volume's capacity in bytes.
	Capacity int64
	// FilesystemOverhead is the fraction of Capacity kept free for the file system:
	// DefaultFilesystemOverhead for a Filesystem-mode volume, 0 for a block volume.
	FilesystemOverhead float64
	// Progress, if set, is called on Import's goroutine with the bytes received from the
	// source so far and their total (-1 when unknown), at most every ProgressInterval and
	// once at the end. FormatProgress turns them into CDI's percentage.
	Progress func(received, total int64)
	// ProgressInterval defaults to DefaultProgressInterval.
	ProgressInterval time.Duration
	// QemuImg is the qemu-img to run; the default is qemu-img from PATH.
	QemuImg string
}

// Result describes a completed import.
type Result struct {
	// Path is the disk.img written.
	Path string
	// Compression is one of the Compression constants.
	Compression string
	// Format is the image's format, one of the Format constants.
	Format string
	// Received is the number of bytes read from the source.
	Received int64
	// ImageSize is the raw image's size (raw and iso) or the image's virtual size.
	ImageSize int64
	// Size is disk.img's size: the volume's usable size.
	Size int64
}

// Import writes the image from o.Source as a sparse raw disk.img of the usable size into
// o.TargetDir. On failure it leaves the target directory as it was (an existing disk.img
// included) and returns an error whose message names the cause; IsTransient tells whether
// trying again may help.
func Import(ctx context.Context, o Options) (Result, error) {
	usable, sum, err := o.validate()
	if err != nil {
		return Result{}, err
	}
	t, err := openTarget(o.TargetDir)
	if err != nil {
		return Result{}, err
	}
	defer t.abort()
	res, err := o.fill(ctx, t.part, usable, sum)
	if err != nil {
		return res, err
	}
	if err := t.commit(usable); err != nil {
		return res, err
	}
	res.Path, res.Size = t.path(), usable
	return res, nil
}

// validate checks the options before anything is read or written and returns the usable
// size and the expected checksum.
func (o *Options) validate() (int64, *checksum, error) {
	if o.Source == nil {
		return 0, nil, permanentf("no source")
	}
	if v, ok := o.Source.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return 0, nil, err
		}
	}
	if o.TargetDir == "" {
		return 0, nil, permanentf("no target directory")
	}
	sum, err := parseChecksum(o.Checksum)
	if err != nil {
		return 0, nil, err
	}
	if _, blank := o.Source.(BlankSource); blank && sum != nil {
		return 0, nil, permanentf("a blank disk has no checksum to verify")
	}
	usable, err := importerapi.UsableSize(o.Capacity, o.FilesystemOverhead)
	if err != nil {
		return 0, nil, &Error{Err: err} // no retry mends the volume's size
	}
	return usable, sum, nil
}

// fill writes the source's image into part.
func (o *Options) fill(ctx context.Context, part *os.File, usable int64, sum *checksum) (Result, error) {
	body, total, err := o.Source.Open(ctx)
	if err != nil {
		return Result{}, err
	}
	defer body.Close()
	interval := o.ProgressInterval
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	src := &progressReader{ctx: ctx, r: body, total: total, report: o.Progress, interval: interval}
	var in io.Reader = src
	if sum != nil {
		in = io.TeeReader(src, sum.hash)
	}
	s := &stream{Options: o, raw: bufio.NewReaderSize(in, headSize), total: total, usable: usable, sum: sum}
	err = s.write(ctx, part)
	s.res.Received = src.received
	src.done()
	if err != nil && src.err != nil {
		err = src.err // the source's own failure, not what a decompressor made of it
	}
	return s.res, err
}

// stream is one pass over the source's bytes.
type stream struct {
	*Options
	raw    *bufio.Reader // the bytes as received
	total  int64         // their number, -1 when unknown
	usable int64
	sum    *checksum
	res    Result
}

// write decompresses and detects the image and writes it into part: raw and iso directly,
// other formats through a scratch file and qemu-img.
func (s *stream) write(ctx context.Context, part *os.File) error {
	compression, data, err := decompress(s.raw)
	s.res.Compression = compression
	if err != nil {
		return err
	}
	defer data.Close()
	content := bufio.NewReaderSize(data, headSize)
	format, err := detectFormat(content, compression)
	if err != nil {
		return s.readError(err)
	}
	s.res.Format = format
	if format != FormatRaw && format != FormatISO {
		return s.convert(ctx, content, part)
	}
	if compression == CompressionNone && s.total > s.usable {
		return tooLarge("raw size", s.total, s.usable)
	}
	n, err := copySparse(part, content, s.usable)
	if errors.Is(err, errOverLimit) {
		return permanentf("the image is larger than the volume: raw size at least %d bytes (reading stopped there), usable %d bytes", n, s.usable)
	}
	if err != nil {
		return s.readError(err)
	}
	s.res.ImageSize = n
	return s.finish()
}

// convert writes the image in content to a scratch file, checks it with qemu-img info and
// converts it into part.
func (s *stream) convert(ctx context.Context, content io.Reader, part *os.File) error {
	if s.ScratchDir == "" {
		return permanentf("a %s image is converted in a scratch directory, and none was given", s.res.Format)
	}
	scratch, err := os.CreateTemp(s.ScratchDir, "import-*."+s.res.Format)
	if err != nil {
		return permanentf("creating a scratch file: %w", err)
	}
	defer func() {
		scratch.Close()
		os.Remove(scratch.Name())
	}()
	limit := s.usable + s.usable/64 + scratchFixedMargin
	if n, err := copySparse(scratch, content, limit); errors.Is(err, errOverLimit) {
		return permanentf("the image is larger than the volume: the %s file is at least %d bytes (reading stopped there), more than the usable %d bytes allow", s.res.Format, n, s.usable)
	} else if err != nil {
		return s.readError(err)
	}
	if err := s.finish(); err != nil {
		return err
	}
	q := qemuImg{path: s.QemuImg}
	if q.path == "" {
		q.path = "qemu-img"
	}
	info, err := q.info(ctx, scratch, s.res.Format)
	if err != nil {
		return err
	}
	if err := checkImage(info, s.res.Format, s.usable); err != nil {
		return err
	}
	s.res.ImageSize = info.VirtualSize
	if err := part.Truncate(s.usable); err != nil {
		return permanentf("resizing %s: %w", part.Name(), err)
	}
	return q.convert(ctx, scratch, s.res.Format, part)
}

// finish reads what follows the compressed stream, so that the checksum covers every byte
// received, and verifies the checksum.
func (s *stream) finish() error {
	n, err := io.Copy(io.Discard, io.LimitReader(s.raw, maxTrailing+1))
	if err != nil {
		return err
	}
	if n > maxTrailing {
		return permanentf("unsupported format: more than %d bytes follow the end of the %s stream", maxTrailing, s.res.Compression)
	}
	if s.sum != nil {
		return s.sum.verify()
	}
	return nil
}

// readError describes a failure to read the image's content: the source's own errors pass
// through, and a decompressor's mean the compressed data is damaged.
func (s *stream) readError(err error) error {
	var e *Error
	if errors.As(err, &e) || s.res.Compression == CompressionNone || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return permanentf("decompressing the %s data: %w", s.res.Compression, err)
}
