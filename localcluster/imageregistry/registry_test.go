package imageregistry

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/vireo-dev/vireo/test/images"
)

// serve runs the registry on a loopback port until the returned stop is called.
func serve(t *testing.T, cfg Config) (addr string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, cfg) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return l.Addr().String(), stop
}

// TestServesContainerDisk pulls the tiny guest's containerDisk from the registry as a node
// would, checks the disk in its layer against the built file, restarts the registry on the
// same storage (blobs are kept, not rewritten) and pushes an image.
func TestServesContainerDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the guest images; skipped with -short")
	}
	out, err := images.RepoOutput()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := images.Build(ctx, images.Options{Out: out})
	if err != nil {
		t.Fatalf("building the guest images: %v", err)
	}
	wantSum, err := fileSHA256(res.Path(images.DiskQCOW2))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Storage: t.TempDir(), Images: out}
	addr, stop := serve(t, cfg)

	resp, err := http.Get("http://" + addr + "/v2/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/: %v %v", resp, err)
	}
	resp.Body.Close()

	pullAndCheck(t, ctx, ContainerDiskImage(addr, images.Tiny), res.Manifest.ContainerDisk.Digest, wantSum)
	blobs, err := filepath.Glob(filepath.Join(cfg.Storage, "sha256", "*"))
	if err != nil || len(blobs) != 4 {
		t.Fatalf("blobs on disk: %v, %v; want the config and the layer of the containerDisk and of the kernelBoot image", blobs, err)
	}
	checkKernelBoot(t, ctx, KernelBootImage(addr, images.Tiny), res)
	before, err := os.Stat(blobs[0])
	if err != nil {
		t.Fatal(err)
	}

	stop()
	addr, _ = serve(t, cfg)
	pullAndCheck(t, ctx, ContainerDiskImage(addr, images.Tiny), res.Manifest.ContainerDisk.Digest, wantSum)
	after, err := os.Stat(blobs[0])
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a blob was rewritten on restart (%v, %v)", before.ModTime(), err)
	}

	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(addr+"/test/pushed:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		t.Fatalf("push: %v", err)
	}
	pulled, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling the pushed image: %v", err)
	}
	if got, want := digestOf(t, pulled.Digest), digestOf(t, img.Digest); got != want {
		t.Errorf("pushed %s, pulled %s", want, got)
	}
}

func digestOf(t *testing.T, f func() (v1.Hash, error)) string {
	t.Helper()
	h, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// pullAndCheck pulls ref (plain HTTP) and checks its digest and that its only layer holds
// images.ContainerDiskPath owned 107:107, mode 0440, with content digest wantSum.
func pullAndCheck(t *testing.T, ctx context.Context, image, wantDigest, wantSum string) {
	t.Helper()
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling %s: %v", image, err)
	}
	if got := digestOf(t, img.Digest); got != wantDigest {
		t.Errorf("%s has digest %s, the layout's image %s", image, got, wantDigest)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers (%v), want 1", image, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s: no %s in the layer", image, images.ContainerDiskPath)
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name != images.ContainerDiskPath {
			continue
		}
		if hdr.Uid != 107 || hdr.Gid != 107 || hdr.Mode != 0o440 {
			t.Errorf("%s: %d:%d mode %o, want 107:107 0440", hdr.Name, hdr.Uid, hdr.Gid, hdr.Mode)
		}
		h := sha256.New()
		if _, err := io.Copy(h, tr); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != wantSum {
			t.Errorf("/%s in the pulled layer has sha256 %s, the built %s has %s", hdr.Name, got, images.DiskQCOW2, wantSum)
		}
		return
	}
}

// checkKernelBoot pulls the guest's kernelBoot image and checks that its flattened file system
// holds the built kernel and initramfs at the paths test/images documents.
func checkKernelBoot(t *testing.T, ctx context.Context, image string, res images.Result) {
	t.Helper()
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling %s: %v", image, err)
	}
	want := map[string]string{}
	for p, f := range map[string]string{images.KernelBootKernelPath: images.Kernel, images.KernelBootInitrdPath: images.Initrd} {
		if want[strings.TrimPrefix(p, "/")], err = fileSHA256(res.Path(f)); err != nil {
			t.Fatal(err)
		}
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sum, ok := want[hdr.Name]
		if !ok {
			continue
		}
		h := sha256.New()
		if _, err := io.Copy(h, tr); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum || hdr.Typeflag != tar.TypeReg {
			t.Errorf("%s: /%s is type %c with sha256 %s, want a regular file with %s", image, hdr.Name, hdr.Typeflag, got, sum)
		}
		delete(want, hdr.Name)
	}
	if len(want) > 0 {
		t.Errorf("%s lacks %v", image, want)
	}
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
