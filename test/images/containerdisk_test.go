package images

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestContainerDisk(t *testing.T) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.qcow2")
	if err := os.WriteFile(disk, []byte("QFI\xfb not really a qcow2"), 0o644); err != nil {
		t.Fatal(err)
	}
	digest, err := writeContainerDisk(filepath.Join(dir, "layout"), disk, dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := writeContainerDisk(filepath.Join(dir, "layout2"), disk, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again != digest {
		t.Errorf("the same disk gave images %s and %s", digest, again)
	}
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest || im.Manifests[0].Annotations[RefNameAnnotation] != "latest" {
		t.Fatalf("index: %+v", im.Manifests)
	}
	img, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	cfg, err := img.ConfigFile()
	if err != nil || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("config: %+v, %v", cfg, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var seen []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, hdr.Name)
		if hdr.Name != ContainerDiskPath {
			continue
		}
		if hdr.Uid != 107 || hdr.Gid != 107 || hdr.Mode != 0o440 || hdr.Typeflag != tar.TypeReg {
			t.Errorf("%s: uid %d gid %d mode %o type %c; want 107:107 0440, a regular file", hdr.Name, hdr.Uid, hdr.Gid, hdr.Mode, hdr.Typeflag)
		}
		b, _ := io.ReadAll(tr)
		if string(b) != "QFI\xfb not really a qcow2" {
			t.Errorf("%s holds %q", hdr.Name, b)
		}
	}
	if len(seen) != 2 || seen[0] != "disk/" || seen[1] != ContainerDiskPath {
		t.Errorf("layer entries %v, want [disk/ %s]", seen, ContainerDiskPath)
	}
}
