package importer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

func TestUsableSize(t *testing.T) {
	for _, tc := range []struct {
		capacity int64
		overhead float64
		want     int64
	}{
		{1 << 30, DefaultFilesystemOverhead, 967 << 20},
		{10 << 30, DefaultFilesystemOverhead, 9676 << 20},
		{16 << 20, DefaultFilesystemOverhead, 15 << 20},
		{1 << 30, 0, 1 << 30},
		{1<<30 + 4096, 0, 1 << 30},
		{1000 * 1000 * 1000, 0.1, 858 << 20},
	} {
		got, err := importerapi.UsableSize(tc.capacity, tc.overhead)
		if err != nil || got != tc.want {
			t.Errorf("importerapi.UsableSize(%d, %v) = %d, %v; want %d", tc.capacity, tc.overhead, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		capacity int64
		overhead float64
	}{{0, 0}, {-1, 0}, {1 << 30, -0.1}, {1 << 30, 1}, {1 << 20, DefaultFilesystemOverhead}} {
		if got, err := importerapi.UsableSize(tc.capacity, tc.overhead); err == nil {
			t.Errorf("importerapi.UsableSize(%d, %v) = %d, want an error", tc.capacity, tc.overhead, got)
		}
	}
}

func TestFormatProgress(t *testing.T) {
	for _, tc := range []struct {
		received, total int64
		want            string
	}{
		{0, 100, "0.00%"},
		{4523, 10000, "45.23%"},
		{99999, 100000, "99.99%"},
		{100, 100, "100.00%"},
		{200, 100, "100.00%"},
		{0, 0, "100.00%"},
		{5, -1, "N/A"},
	} {
		if got := FormatProgress(tc.received, tc.total); got != tc.want {
			t.Errorf("FormatProgress(%d, %d) = %q, want %q", tc.received, tc.total, got, tc.want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	at := func(off int, sig string) []byte {
		b := make([]byte, 0x9000)
		copy(b[off:], sig)
		return b
	}
	vdi := make([]byte, 512)
	binary.LittleEndian.PutUint32(vdi[0x40:], 0xbeda107f)
	for _, tc := range []struct {
		name    string
		data    []byte
		want    string
		wantErr string
	}{
		{"empty", nil, FormatRaw, ""},
		{"short", []byte("QF"), FormatRaw, ""},
		{"zeros", make([]byte, 1<<20), FormatRaw, ""},
		{"qcow2", at(0, "QFI\xfb"), FormatQCOW2, ""},
		{"vmdk", at(0, "KDMV"), FormatVMDK, ""},
		{"vhdx", at(0, "vhdxfile"), FormatVHDX, ""},
		{"vhd", at(0, "conectix"), FormatVHD, ""},
		{"vdi", vdi, FormatVDI, ""},
		{"iso", at(0x8001, "CD001"), FormatISO, ""},
		{"iso too short", at(0x8001, "CD00")[:0x8005], FormatRaw, ""},
		{"fixed vhd", append(make([]byte, 4096), "conectix"...), FormatRaw, ""},
		{"tar", at(257, "ustar"), "", "tar archive"},
		{"zip", at(0, "PK\x03\x04"), "", "zip archive"},
		{"descriptor", at(0, "# Disk DescriptorFile"), "", "VMDK descriptor"},
		{"qed", at(0, "QED\x00"), "", "QED"},
		{"xz inside", at(0, "\xfd7zXZ\x00"), "", "xz-compressed data inside gzip"},
	} {
		got, err := detectFormat(bufio.NewReaderSize(bytes.NewReader(tc.data), headSize), CompressionGzip)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: detectFormat = %q, %v; want %q, %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
	// Uncompressed content that starts like a compressed stream is not a second layer.
	if got, err := detectFormat(bufio.NewReaderSize(strings.NewReader("\x1f\x8b raw"), headSize), CompressionNone); got != FormatRaw || err != nil {
		t.Errorf("detectFormat = %q, %v", got, err)
	}
}

// zeros is an endless stream of zeros.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

func TestCopySparse(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	// An endless source is cut off just past the limit.
	src := &zeros{}
	n, err := copySparse(f, src, 1<<20)
	if !errors.Is(err, errOverLimit) || n > 1<<20+sparseBlock || src.n > 1<<20+2*sparseBlock {
		t.Errorf("copySparse of endless zeros = %d, %v after reading %d bytes", n, err, src.n)
	}

	// Content is copied exactly, zero blocks become holes, the size is the content's.
	data := make([]byte, 4<<20+100)
	copy(data[sparseBlock+7:], "one")
	copy(data[len(data)-3:], "end")
	n, err = copySparse(f, io.MultiReader(bytes.NewReader(data[:1000]), bytes.NewReader(data[1000:])), int64(len(data)))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("copySparse = %d, %v", n, err)
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got, data) {
		t.Error("the copy differs")
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 > 4*sparseBlock {
		t.Errorf("%d bytes allocated for two non-zero blocks", st.Blocks*512)
	}

	// A read error is returned as it is.
	boom := errors.New("boom")
	if _, err := copySparse(f, io.MultiReader(bytes.NewReader(data[:10]), iotestErr{boom}), 1<<30); err != boom {
		t.Errorf("copySparse = %v, want %v", err, boom)
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

func TestCommandOptions(t *testing.T) {
	secret := t.TempDir()
	os.WriteFile(filepath.Join(secret, SecretAccessKeyID), []byte("user"), 0o600)
	os.WriteFile(filepath.Join(secret, SecretSecretKey), []byte("pass word"), 0o600)
	c := NewCommandOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	c.AddFlags(fs)
	err := fs.Parse([]string{"--url=https://example.com/disk.img", "--header=A: 1,2", "--header=B: 3",
		"--secret-dir=" + secret, "--capacity=1Gi", "--checksum=sha256:" + strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	src, ok := o.Source.(*HTTPSource)
	if !ok || src.URL != "https://example.com/disk.img" || src.Username != "user" || src.Password != "pass word" ||
		strings.Join(src.Headers, "|") != "A: 1,2|B: 3" {
		t.Errorf("source %+v", o.Source)
	}
	if o.Capacity != 1<<30 || o.FilesystemOverhead != DefaultFilesystemOverhead || o.TargetDir != "/data" || o.ScratchDir != "/scratch" {
		t.Errorf("options %+v", o)
	}
	for _, args := range [][]string{
		{"--url=http://x/"},
		{"--url=http://x/", "--capacity=lots"},
		{"--source=file", "--capacity=1Gi"},
		{"--source=s3", "--capacity=1Gi"},
		{"--url=http://x/", "--capacity=1Gi", "--secret-dir=/nonexistent"},
	} {
		c := NewCommandOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		c.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Options(); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestCommandRun(t *testing.T) {
	target, scratch := dirs(t)
	termLog := filepath.Join(t.TempDir(), "termination-log")
	c := NewCommandOptions()
	c.Source, c.Path, c.TargetDir, c.ScratchDir, c.Capacity, c.TerminationLog = SourceKindFile, "/nonexistent/disk.img", target, scratch, "16Mi", termLog
	if err := c.Run(testContext(t)); err == nil {
		t.Fatal("the import succeeded")
	}
	if msg, _ := os.ReadFile(termLog); !strings.Contains(string(msg), "/nonexistent/disk.img") {
		t.Errorf("termination log %q", msg)
	}

	c.Source = SourceKindBlank
	if err := os.Remove(termLog); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(target, importerapi.DiskName)); err != nil || st.Size() != 15<<20 {
		t.Errorf("disk.img: %v, %v", st, err)
	}
	if _, err := os.Stat(termLog); err == nil {
		t.Error("a successful import wrote the termination log")
	}
}

func TestHeaderDirs(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"token": "Authorization: Bearer s3cret\n", ".hidden": "X-No: 1", "other": "X-Trace: 7"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCommandOptions()
	c.URL, c.Capacity, c.HeaderDirs, c.Headers = "http://x/y", "64Mi", []string{dir}, []string{"X-A: 1"}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	got := o.Source.(*HTTPSource).Headers
	if strings.Join(got, "|") != "X-A: 1|X-Trace: 7|Authorization: Bearer s3cret" {
		t.Errorf("headers %q", got)
	}
	c.HeaderDirs = []string{filepath.Join(dir, "missing")}
	if _, err := c.Options(); err == nil {
		t.Error("a missing header directory was accepted")
	}
}
