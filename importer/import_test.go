package importer

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

func TestImportFormats(t *testing.T) {
	raw := rawContent()
	iso := rawContent()
	copy(iso[0x8001:], "CD001")
	tests := []struct {
		file, compression, format string
		want                      []byte
	}{
		{"raw", CompressionNone, FormatRaw, raw},
		{"raw.gz", CompressionGzip, FormatRaw, raw},
		{"raw.xz", CompressionXZ, FormatRaw, raw},
		{"raw.zst", CompressionZstd, FormatRaw, raw},
		{"iso", CompressionNone, FormatISO, iso},
		{"qcow2", CompressionNone, FormatQCOW2, raw},
		{"qcow2.xz", CompressionXZ, FormatQCOW2, raw},
		{"qcow2.gz", CompressionGzip, FormatQCOW2, raw},
		{"vmdk", CompressionNone, FormatVMDK, raw},
		{"vmdk-stream", CompressionNone, FormatVMDK, raw},
		{"vdi", CompressionNone, FormatVDI, raw},
		{"vhdx", CompressionNone, FormatVHDX, raw},
		{"vhd", CompressionNone, FormatVHD, raw},
		// A fixed VHD is raw data and a footer; like qemu-img, the importer reads it as raw,
		// footer included (want nil: the file as it is).
		{"vhd-fixed", CompressionNone, FormatRaw, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := fixture(t, tc.file)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			o := options(t, FileSource{Path: path})
			var calls int
			var lastReceived, lastTotal int64
			o.Progress = func(received, total int64) { calls, lastReceived, lastTotal = calls+1, received, total }
			res, err := Import(testContext(t), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Compression != tc.compression || res.Format != tc.format {
				t.Errorf("detected %s, %s; want %s, %s", res.Compression, res.Format, tc.compression, tc.format)
			}
			if res.Path != filepath.Join(o.TargetDir, importerapi.DiskName) || res.Size != testUsable || res.Received != st.Size() {
				t.Errorf("result %+v, want path %s, size %d, received %d", res, filepath.Join(o.TargetDir, importerapi.DiskName), testUsable, st.Size())
			}
			if res.ImageSize < imageSize || res.ImageSize > imageSize+imageSize/100 {
				t.Errorf("image size %d, want about %d", res.ImageSize, imageSize)
			}
			if calls == 0 || lastReceived != st.Size() || lastTotal != st.Size() {
				t.Errorf("the last progress report was %d of %d bytes (%d calls), want %d of %d", lastReceived, lastTotal, calls, st.Size(), st.Size())
			}
			want := tc.want
			if want == nil {
				if want, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			checkDisk(t, o, want)
		})
	}
}

func TestImportBlank(t *testing.T) {
	o := options(t, BlankSource{})
	res, err := Import(testContext(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatRaw || res.ImageSize != 0 || res.Size != testUsable {
		t.Errorf("result %+v", res)
	}
	checkDisk(t, o, nil)
}

// TestImportReplacesDisk: a successful import replaces an existing disk.img (the controller
// decides whether to import at all).
func TestImportReplacesDisk(t *testing.T) {
	o := options(t, FileSource{Path: fixture(t, "raw.gz")})
	if err := os.WriteFile(filepath.Join(o.TargetDir, importerapi.DiskName), []byte("old disk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.TargetDir, partName), []byte("leftover of a killed import"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(testContext(t), o); err != nil {
		t.Fatal(err)
	}
	checkDisk(t, o, rawContent())
}

func TestImportBlockVolume(t *testing.T) {
	o := options(t, FileSource{Path: fixture(t, "raw")})
	o.Capacity, o.FilesystemOverhead = 8<<20, 0
	res, err := Import(testContext(t), o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, rawContent()) {
		t.Error("disk.img differs from the image")
	}
}

func TestChecksum(t *testing.T) {
	path := fixture(t, "qcow2.xz")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	digest := func(h hash.Hash) string {
		h.Write(data)
		return hex.EncodeToString(h.Sum(nil))
	}
	for _, sum := range []string{
		"md5:" + digest(md5.New()),
		"sha1:" + digest(sha1.New()),
		"sha256:" + strings.ToUpper(digest(sha256.New())), // hex in either case, as vireo-apiserver accepts it
		"sha512:" + digest(sha512.New()),
	} {
		t.Run(strings.Split(sum, ":")[0], func(t *testing.T) {
			o := options(t, FileSource{Path: path})
			o.Checksum = sum
			if _, err := Import(testContext(t), o); err != nil {
				t.Fatal(err)
			}
			checkDisk(t, o, rawContent())
		})
	}
	t.Run("mismatch", func(t *testing.T) {
		// The expected digest is that of the decompressed image, not of the bytes received.
		h := sha256.Sum256(rawContent())
		wrong := hex.EncodeToString(h[:])
		for _, file := range []string{"raw.gz", "qcow2.xz"} {
			o := options(t, FileSource{Path: fixture(t, file)})
			o.Checksum = "sha256:" + wrong
			data, err := os.ReadFile(o.Source.(FileSource).Path)
			if err != nil {
				t.Fatal(err)
			}
			right := sha256.Sum256(data)
			err = importFails(t, o, nil, "checksum mismatch", wrong, hex.EncodeToString(right[:]))
			if IsTransient(err) {
				t.Error("a checksum mismatch is transient")
			}
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for _, sum := range []string{"sha256", "sha256:xyz", "sha256:abcd", "crc32:00000000", "md5:" + strings.Repeat("0", 64)} {
			o := options(t, FileSource{Path: fixture(t, "raw")})
			o.Checksum = sum
			importFails(t, o, nil, "the checksum", sum)
		}
	})
}
