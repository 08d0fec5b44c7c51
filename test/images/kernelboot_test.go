package images

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestKernelBootLayout: the layout holds the kernel and initramfs at their documented paths, is
// reproducible, and is rewritten only when they change.
func TestKernelBootLayout(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(Kernel, "kernel")
	write(Initrd, "initrd")
	files, err := hashFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := Manifest{Files: files}
	if wrote, err := ensureKernelBoot(dir, work, m); err != nil || !wrote {
		t.Fatalf("first: wrote %v, %v", wrote, err)
	}
	first := layoutDigest(t, dir)
	got := kernelBootFiles(t, dir)
	if got["boot/vmlinuz"] != "kernel" || got["boot/initrd.img"] != "initrd" {
		t.Errorf("files in the image: %v", got)
	}
	if wrote, err := ensureKernelBoot(dir, work, m); err != nil || wrote {
		t.Errorf("unchanged inputs: wrote %v, %v; want nothing written", wrote, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, KernelBootDir)); err != nil {
		t.Fatal(err)
	}
	if wrote, err := ensureKernelBoot(dir, work, m); err != nil || !wrote || layoutDigest(t, dir) != first {
		t.Errorf("rewritten layout: wrote %v, %v; digest %s, want %s again", wrote, err, layoutDigest(t, dir), first)
	}
	write(Kernel, "kernel 2")
	if m.Files, err = hashFiles(dir); err != nil {
		t.Fatal(err)
	}
	if wrote, err := ensureKernelBoot(dir, work, m); err != nil || !wrote || layoutDigest(t, dir) == first {
		t.Errorf("new kernel: wrote %v, %v; the digest must change", wrote, err)
	}
}

func layoutDigest(t *testing.T, dir string) string {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, KernelBootDir))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %+v, %v", im, err)
	}
	return im.Manifests[0].Digest.String()
}

func kernelBootFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, KernelBootDir))
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			out[hdr.Name] = string(data)
		}
	}
}
