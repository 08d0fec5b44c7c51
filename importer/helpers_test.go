package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

const (
	// imageSize is the size of the test images' raw content.
	imageSize = 8 << 20
	// testCapacity is the capacity of the test volumes: usable 15 MiB, room for all test
	// images (a VHD's virtual size is rounded up to its geometry).
	testCapacity = 16 << 20
	testUsable   = 15 << 20
)

// fixtureDir holds the test images, built once per test binary.
var (
	fixtureDir  string
	fixtureOnce sync.Once
	fixtureErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// needQemuImg skips the test when qemu-img is not installed.
func needQemuImg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skip("qemu-img is not on PATH; run hack/install-deps.sh")
	}
}

// testContext is a context that ends with the test, bounded so that a hang fails.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawContent is the test image's content: zeros with recognisable markers at 0, 1 MiB and
// 7 MiB (and an unaligned one past 5 MiB).
func rawContent() []byte {
	b := make([]byte, imageSize)
	for _, off := range []int{0, 1 << 20, 5<<20 + 12345, 7 << 20} {
		marker := []byte(strings.Repeat("vireo marker at "+strconv.Itoa(off)+"; ", 100))
		copy(b[off:], marker)
	}
	return b
}

// fixture returns the path of the named test image, building all of them on first use:
// raw, raw.gz, raw.xz, raw.zst, iso, qcow2, qcow2.xz, qcow2.gz, vmdk, vmdk-stream, vdi,
// vhdx, vhd (dynamic) and vhd-fixed.
func fixture(t *testing.T, name string) string {
	t.Helper()
	needQemuImg(t)
	fixtureOnce.Do(func() { fixtureDir, fixtureErr = buildFixtures() })
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return filepath.Join(fixtureDir, name)
}

func buildFixtures() (string, error) {
	dir, err := os.MkdirTemp("", "importer-fixtures-")
	if err != nil {
		return "", err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	raw := rawContent()
	iso := rawContent()
	copy(iso[0x8001:], "CD001")
	steps := []func() error{
		func() error { return os.WriteFile(p("raw"), raw, 0o644) },
		func() error { return os.WriteFile(p("iso"), iso, 0o644) },
		func() error { return compressFile(p("raw"), p("raw.gz"), gzipData) },
		func() error { return compressFile(p("raw"), p("raw.xz"), xzData) },
		func() error { return compressFile(p("raw"), p("raw.zst"), zstdData) },
		func() error { return qemuImgRun("convert", "-f", "raw", "-O", "qcow2", p("raw"), p("qcow2")) },
		func() error { return compressFile(p("qcow2"), p("qcow2.xz"), xzData) },
		func() error { return compressFile(p("qcow2"), p("qcow2.gz"), gzipData) },
		func() error { return qemuImgRun("convert", "-f", "raw", "-O", "vmdk", p("raw"), p("vmdk")) },
		func() error {
			return qemuImgRun("convert", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", p("raw"), p("vmdk-stream"))
		},
		func() error { return qemuImgRun("convert", "-f", "raw", "-O", "vdi", p("raw"), p("vdi")) },
		func() error { return qemuImgRun("convert", "-f", "raw", "-O", "vhdx", p("raw"), p("vhdx")) },
		func() error { return qemuImgRun("convert", "-f", "raw", "-O", "vpc", p("raw"), p("vhd")) },
		func() error {
			return qemuImgRun("convert", "-f", "raw", "-O", "vpc", "-o", "subformat=fixed", p("raw"), p("vhd-fixed"))
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func qemuImgRun(args ...string) error {
	out, err := exec.Command("qemu-img", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func compressFile(src, dst string, compress func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	c, err := compress(b)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, c, 0o644)
}

func gzipData(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	err := w.Close()
	return buf.Bytes(), err
}

func xzData(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	err = w.Close()
	return buf.Bytes(), err
}

func zstdData(b []byte) ([]byte, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil), nil
}

// dirs returns a fresh target and scratch directory.
func dirs(t *testing.T) (target, scratch string) {
	t.Helper()
	base := t.TempDir()
	target, scratch = filepath.Join(base, "data"), filepath.Join(base, "scratch")
	for _, d := range []string{target, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return target, scratch
}

// options returns the options of a test import from src into fresh directories.
func options(t *testing.T, src Source) Options {
	t.Helper()
	target, scratch := dirs(t)
	return Options{Source: src, TargetDir: target, ScratchDir: scratch, Capacity: testCapacity, FilesystemOverhead: DefaultFilesystemOverhead}
}

// checkDisk checks that disk.img in o.TargetDir holds want followed by zeros, is exactly the
// usable size and sparse, and that nothing else is left in the target or scratch directory.
func checkDisk(t *testing.T, o Options, want []byte) {
	t.Helper()
	path := filepath.Join(o.TargetDir, importerapi.DiskName)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != testUsable {
		t.Errorf("disk.img is %d bytes, want the usable size %d", len(got), testUsable)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Errorf("disk.img does not start with the image's content")
	} else if !bytes.Equal(got[len(want):], make([]byte, len(got)-len(want))) {
		t.Errorf("disk.img is not all zeros after the image's content")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if allocated := st.Blocks * 512; allocated > 1<<20 {
		t.Errorf("disk.img has %d bytes allocated of %d; it should be sparse", allocated, st.Size)
	}
	if mode := os.FileMode(st.Mode).Perm(); mode != 0o660 {
		t.Errorf("disk.img has mode %v, want 0660", mode)
	}
	checkOnly(t, o.TargetDir, importerapi.DiskName)
	checkOnly(t, o.ScratchDir)
}

// checkOnly checks that dir holds exactly the named entries.
func checkOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// importFails runs the import, expects it to fail with a message containing every one of
// wants, and checks that the target and scratch directories hold only keep.
func importFails(t *testing.T, o Options, keep []string, wants ...string) error {
	t.Helper()
	_, err := Import(testContext(t), o)
	if err == nil {
		t.Fatal("the import succeeded")
	}
	t.Logf("error: %v", err)
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	checkOnly(t, o.TargetDir, keep...)
	checkOnly(t, o.ScratchDir)
	return err
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
