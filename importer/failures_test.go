package importer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

// writeFile writes data to a new file in a fresh directory and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCorruptQCOW2(t *testing.T) {
	// The header and its cluster are intact, the rest (refcount and L1/L2 tables, data) is
	// garbage: qemu-img info accepts it, qemu-img convert does not.
	data := readFixture(t, "qcow2")
	rand.New(rand.NewSource(1)).Read(data[64<<10:])
	o := options(t, FileSource{Path: writeFile(t, "corrupt.qcow2", data)})
	err := importFails(t, o, nil, "qemu-img convert failed: ", "qcow2: Image is corrupt")
	if IsTransient(err) {
		t.Error("a corrupt image is transient")
	}
	// A header that makes no sense fails in qemu-img info, with its message.
	data = readFixture(t, "qcow2")
	rand.New(rand.NewSource(1)).Read(data[8:512])
	o = options(t, FileSource{Path: writeFile(t, "bad-header.qcow2", data)})
	importFails(t, o, nil, "qemu-img info failed: ", "Could not open")
}

func TestTooLarge(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"raw", "the image is larger than the volume: raw size 8388608 bytes, usable 7340032 bytes"},
		{"raw.gz", "the image is larger than the volume: raw size at least 7405568 bytes (reading stopped there), usable 7340032 bytes"},
		{"qcow2", "the image is larger than the volume: virtual size 8388608 bytes, usable 7340032 bytes"},
		{"vmdk", "the image is larger than the volume: virtual size 8388608 bytes, usable 7340032 bytes"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			o := options(t, FileSource{Path: fixture(t, tc.file)})
			o.Capacity = 8 << 20 // usable 7 MiB
			err := importFails(t, o, nil, tc.want)
			if IsTransient(err) {
				t.Error("an image too large is transient")
			}
		})
	}
}

func TestBackingFile(t *testing.T) {
	needQemuImg(t)
	dir := t.TempDir()
	base, overlay := filepath.Join(dir, "base.qcow2"), filepath.Join(dir, "overlay.qcow2")
	if err := qemuImgRun("convert", "-f", "raw", "-O", "qcow2", fixture(t, "raw"), base); err != nil {
		t.Fatal(err)
	}
	if err := qemuImgRun("create", "-f", "qcow2", "-b", base, "-F", "qcow2", overlay); err != nil {
		t.Fatal(err)
	}
	importFails(t, options(t, FileSource{Path: overlay}), nil, "has a backing file", base)

	dataFile := filepath.Join(dir, "external.qcow2")
	if err := qemuImgRun("create", "-f", "qcow2", "-o", "data_file="+filepath.Join(dir, "data.raw")+",data_file_raw=on", dataFile, "8M"); err != nil {
		t.Fatal(err)
	}
	importFails(t, options(t, FileSource{Path: dataFile}), nil, "has an external data file")
}

func TestUnsupportedFormats(t *testing.T) {
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	raw := rawContent()
	tw.WriteHeader(&tar.Header{Name: "disk.img", Mode: 0o644, Size: int64(len(raw))})
	tw.Write(raw)
	tw.Close()
	tgz, err := gzipData(tarball.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	doubleGz, err := gzipData(readFixture(t, "raw.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"tar", tarball.Bytes(), "unsupported format: found a tar archive"},
		{"tar.gz", tgz, "unsupported format: found a tar archive"},
		{"zip", append([]byte("PK\x03\x04"), make([]byte, 100)...), "unsupported format: found a zip archive"},
		{"vmdk descriptor", []byte("# Disk DescriptorFile\nversion=1\nRW 16384 FLAT \"other-flat.vmdk\" 0\n"), "unsupported format: found a VMDK descriptor file"},
		{"gz.gz", doubleGz, "only one layer of compression"},
		{"bzip2", []byte("BZh91AY&SY\x00\x00\x00\x00"), "unsupported format: bzip2-compressed data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, FileSource{Path: writeFile(t, "image", tc.data)})
			importFails(t, o, nil, tc.want)
		})
	}
}

// gzipZeros returns prefix and n zeros, gzip-compressed.
func gzipZeros(t *testing.T, prefix string, n int) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(prefix))
	block := make([]byte, 1<<20)
	for ; n > 0; n -= len(block) {
		zw.Write(block[:min(n, len(block))])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// infiniteGzip is a source of a gzip stream of zeros that never ends.
type infiniteGzip struct{ zeros atomic.Int64 }

func (s *infiniteGzip) Open(context.Context) (io.ReadCloser, int64, error) {
	r, w := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		block := make([]byte, 1<<20)
		for {
			if _, err := zw.Write(block); err != nil {
				return
			}
			s.zeros.Add(int64(len(block)))
		}
	}()
	return r, -1, nil
}

func (s *infiniteGzip) String() string { return "an endless gzip stream" }

func TestDecompressionBomb(t *testing.T) {
	zeros := gzipZeros(t, "", 64<<20)
	t.Run("raw", func(t *testing.T) {
		o := options(t, FileSource{Path: writeFile(t, "bomb.gz", zeros)})
		o.Capacity = 8 << 20
		importFails(t, o, nil, "the image is larger than the volume", "usable 7340032 bytes")
	})
	t.Run("endless", func(t *testing.T) {
		src := &infiniteGzip{}
		o := options(t, src)
		o.Capacity = 8 << 20
		importFails(t, o, nil, "the image is larger than the volume")
		if n := src.zeros.Load(); n > 64<<20 {
			t.Errorf("the import decompressed %d bytes before it stopped", n)
		}
	})
	t.Run("scratch", func(t *testing.T) {
		// A qcow2 header followed by 64 MiB of zeros: refused while it is written to the
		// scratch directory, not after.
		bomb := gzipZeros(t, "QFI\xfb", 64<<20)
		o := options(t, FileSource{Path: writeFile(t, "bomb.qcow2.gz", bomb)})
		o.Capacity = 8 << 20
		importFails(t, o, nil, "the image is larger than the volume: the qcow2 file is at least")
	})
}

func TestSymlinks(t *testing.T) {
	for _, name := range []string{partName, importerapi.DiskName} {
		t.Run(name, func(t *testing.T) {
			o := options(t, FileSource{Path: fixture(t, "raw")})
			victim := writeFile(t, "victim", []byte("precious"))
			if err := os.Symlink(victim, filepath.Join(o.TargetDir, name)); err != nil {
				t.Fatal(err)
			}
			importFails(t, o, []string{name}, "is a symbolic link; refusing to follow it")
			if got, _ := os.ReadFile(victim); string(got) != "precious" {
				t.Errorf("the symlink's target was written: %q", got)
			}
		})
	}
}

func TestExistingDiskSurvivesFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		source Source
		sum    string
	}{
		{"checksum", FileSource{Path: fixture(t, "raw.gz")}, "md5:00000000000000000000000000000000"},
		{"corrupt", FileSource{Path: writeFile(t, "bad.xz", []byte("\xfd7zXZ\x00garbage"))}, ""},
		{"missing", FileSource{Path: "/nonexistent/disk.img"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t, tc.source)
			o.Checksum = tc.sum
			disk := filepath.Join(o.TargetDir, importerapi.DiskName)
			if err := os.WriteFile(disk, []byte("the old disk"), 0o660); err != nil {
				t.Fatal(err)
			}
			importFails(t, o, []string{importerapi.DiskName})
			if got, _ := os.ReadFile(disk); string(got) != "the old disk" {
				t.Errorf("disk.img is now %q", got)
			}
		})
	}
}

func TestMissingScratchDir(t *testing.T) {
	o := options(t, FileSource{Path: fixture(t, "qcow2")})
	o.ScratchDir = ""
	_, err := Import(testContext(t), o)
	if err == nil || !strings.Contains(err.Error(), "scratch directory") {
		t.Errorf("error %v, want one about the scratch directory", err)
	}
	checkOnly(t, o.TargetDir)
}

func TestMissingQemuImg(t *testing.T) {
	o := options(t, FileSource{Path: fixture(t, "qcow2")})
	o.QemuImg = filepath.Join(t.TempDir(), "no-qemu-img")
	importFails(t, o, nil, "qemu-img info failed")
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := options(t, FileSource{Path: fixture(t, "raw")})
	_, err := Import(ctx, o)
	if err == nil || !IsTransient(err) {
		t.Errorf("error %v, want a transient one", err)
	}
	checkOnly(t, o.TargetDir)
}

// TestVolumeFullIsTransient: a volume out of space is retried (space may return), also where
// the write failed inside a permanent error; other local write errors are not.
func TestVolumeFullIsTransient(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/data/disk.img.part", Err: syscall.ENOSPC}
	for _, err := range []error{full, fmt.Errorf("writing: %w", full), permanentf("creating a scratch file: %w", full),
		&os.PathError{Op: "write", Path: "/data/disk.img.part", Err: syscall.EDQUOT}} {
		if !IsTransient(err) {
			t.Errorf("%v: not transient", err)
		}
	}
	if err := (&os.PathError{Op: "write", Path: "/data/disk.img.part", Err: syscall.EROFS}); IsTransient(err) {
		t.Errorf("%v: transient", err)
	}
}
