package imagebuild

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// readLayer returns a layer file's tar headers by name.
func readLayer(t *testing.T, path string) map[string]*tar.Header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	got := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h
	}
}

func TestWriteLayerIsReproducibleAndSafe(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755))
	must(os.WriteFile(filepath.Join(root, "usr", "bin", "helper"), []byte("#!x"), 0o755))
	must(os.Chmod(filepath.Join(root, "usr", "bin", "helper"), 0o4755|fs.ModeSetuid))
	must(os.Link(filepath.Join(root, "usr", "bin", "helper"), filepath.Join(root, "usr", "bin", "helper2")))
	must(os.Symlink("helper", filepath.Join(root, "usr", "bin", "alias")))
	epoch := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var layers [][]byte
	for i := range 2 {
		// A later build sees other times on the files: they must not show.
		must(os.Chtimes(filepath.Join(root, "usr", "bin", "helper"), time.Now(), time.Now().Add(time.Duration(i)*time.Hour)))
		path := filepath.Join(t.TempDir(), "layer.tar.gz")
		n, err := writeLayer(path, epoch, []layerFile{{Name: "etc", Mode: fs.ModeDir | 0o755}, {Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)}}, root)
		must(err)
		if n <= 0 {
			t.Errorf("unpacked size %d", n)
		}
		b, err := os.ReadFile(path)
		must(err)
		layers = append(layers, b)
		hs := readLayer(t, path)
		helper := hs["usr/bin/helper"]
		if helper == nil || helper.Mode&0o4000 != 0 || helper.Mode&0o777 != 0o755 {
			t.Errorf("usr/bin/helper: %+v; want mode 0755 without setuid", helper)
		}
		if h := hs["usr/bin/helper2"]; h == nil || h.Typeflag != tar.TypeLink || h.Linkname != "usr/bin/helper" {
			t.Errorf("usr/bin/helper2: %+v; want a hard link to usr/bin/helper", h)
		}
		if h := hs["usr/bin/alias"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "helper" {
			t.Errorf("usr/bin/alias: %+v; want a symlink to helper", h)
		}
		for name, h := range hs {
			if !h.ModTime.Equal(epoch) || h.Uname != "" || h.Gname != "" {
				t.Errorf("%s: time %v, owner names %q/%q; want the epoch and no names", name, h.ModTime, h.Uname, h.Gname)
			}
		}
		if hs["etc/"] == nil || hs["etc/passwd"] == nil {
			t.Errorf("the in-memory files are missing: %v", hs)
		}
	}
	if !bytes.Equal(layers[0], layers[1]) {
		t.Error("the same tree written twice gave different layers")
	}
}
