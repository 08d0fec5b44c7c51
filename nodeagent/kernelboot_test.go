package nodeagent

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	ggcrv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// entry is one tar entry of a test layer.
type entry struct {
	name, body, link string
	typ              byte
}

func reg(name, body string) entry { return entry{name: name, body: body, typ: tar.TypeReg} }

// layer is an uncompressed layer holding entries, in order.
func layer(t *testing.T, entries ...entry) ggcrv1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, Size: int64(len(e.body))}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if e.typ == tar.TypeDir {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testRegistry is a real OCI registry (go-containerregistry's) on a loopback port.
type testRegistry struct {
	srv  *httptest.Server
	host string
}

func newTestRegistry(t *testing.T) *testRegistry {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return &testRegistry{srv: srv, host: strings.TrimPrefix(srv.URL, "http://")}
}

// push pushes an image of layers (lowest first) as repo:tag and returns its reference.
func (r *testRegistry) push(t *testing.T, repoTag string, layers ...ggcrv1.Layer) string {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	image := r.host + "/" + repoTag
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	return image
}

func (r *testRegistry) cache(t *testing.T) *imageCache {
	return newImageCache(t.TempDir(), []string{r.host})
}

func readString(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o444 {
		t.Errorf("%s: mode %v, want a regular file of mode 0444", p, fi.Mode())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestKernelBootExtractsTheFlattenedFiles: the upper layer's kernel wins over the lower's, the
// initrd comes from the lower layer, both land in the image's digest directory under names the
// agent built, and later calls (also concurrent ones, and with the registry gone) reuse them.
func TestKernelBootExtractsTheFlattenedFiles(t *testing.T) {
	r := newTestRegistry(t)
	image := r.push(t, "kb:1",
		layer(t, entry{name: "boot/", typ: tar.TypeDir}, reg("boot/vmlinuz", "old kernel"), reg("./boot/initrd.img", "initrd")),
		layer(t, reg("boot/vmlinuz", "new kernel"), reg("etc/motd", "hi")))
	c := r.cache(t)
	kb := &v1.KernelBootContainer{Image: image, KernelPath: "/boot/vmlinuz", InitrdPath: "//boot/./initrd.img"}
	files, err := c.kernelBoot(context.Background(), kb)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, files.Kernel); got != "new kernel" {
		t.Errorf("kernel = %q, want the upper layer's", got)
	}
	if got := readString(t, files.Initrd); got != "initrd" {
		t.Errorf("initrd = %q", got)
	}
	dir := filepath.Dir(files.Kernel)
	if filepath.Base(dir) != kernelBootDir || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "sha256-") ||
		filepath.Dir(filepath.Dir(dir)) != c.dir || strings.Contains(files.Kernel, "vmlinuz") {
		t.Errorf("kernel at %s, want <cache>/sha256-<digest>/kernelboot/<name the agent built>", files.Kernel)
	}
	if left, _ := filepath.Glob(filepath.Join(c.dir, ".kernelboot-*")); len(left) > 0 {
		t.Errorf("scratch directories left: %v", left)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			again, err := c.kernelBoot(context.Background(), &v1.KernelBootContainer{Image: image, KernelPath: "/boot/vmlinuz"})
			if err == nil && again.Kernel != files.Kernel {
				err = errors.New("another kernel path: " + again.Kernel)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	r.srv.Close()
	if again, err := c.kernelBoot(context.Background(), kb); err != nil || *again != *files {
		t.Errorf("with the registry gone (IfNotPresent): %+v, %v; want the cached files", again, err)
	}
}

// TestKernelBootRefusesWhatItCannotUse: each bad image or path is refused with an error naming
// the path and the image; the ones an image digest fixes for good are permanent.
func TestKernelBootRefusesWhatItCannotUse(t *testing.T) {
	r := newTestRegistry(t)
	defer func(old int64) { maxKernelBootFile = old }(maxKernelBootFile)
	maxKernelBootFile = 64
	cases := []struct {
		name      string
		layers    []ggcrv1.Layer
		kernel    string
		want      []string
		permanent bool
	}{
		{name: "missing", layers: []ggcrv1.Layer{layer(t, reg("boot/vmlinuz-6.1", "k"))}, kernel: "/boot/vmlinuz",
			want: []string{"has no file /boot/vmlinuz"}, permanent: true},
		{name: "symlink", layers: []ggcrv1.Layer{layer(t, reg("boot/vmlinuz-6.1", "k"),
			entry{name: "boot/vmlinuz", typ: tar.TypeSymlink, link: "vmlinuz-6.1"})}, kernel: "/boot/vmlinuz",
			want: []string{"/boot/vmlinuz", "is a symlink (to vmlinuz-6.1)", "does not follow"}, permanent: true},
		{name: "symlink in an upper layer", layers: []ggcrv1.Layer{layer(t, reg("boot/vmlinuz", "k")),
			layer(t, entry{name: "boot/vmlinuz", typ: tar.TypeSymlink, link: "/etc/shadow"})}, kernel: "/boot/vmlinuz",
			want: []string{"is a symlink (to /etc/shadow)"}, permanent: true},
		{name: "symlinked directory", layers: []ggcrv1.Layer{layer(t, reg("usr/boot/vmlinuz", "k"),
			entry{name: "boot", typ: tar.TypeSymlink, link: "usr/boot"})}, kernel: "/boot/vmlinuz",
			want: []string{"has no file /boot/vmlinuz", "symlinks are not followed"}, permanent: true},
		{name: "hard link", layers: []ggcrv1.Layer{layer(t, reg("boot/vmlinuz-6.1", "k"),
			entry{name: "boot/vmlinuz", typ: tar.TypeLink, link: "boot/vmlinuz-6.1"})}, kernel: "/boot/vmlinuz",
			want: []string{"is a hard link (to /boot/vmlinuz-6.1)"}, permanent: true},
		{name: "directory", layers: []ggcrv1.Layer{layer(t, entry{name: "boot/vmlinuz/", typ: tar.TypeDir})}, kernel: "/boot/vmlinuz",
			want: []string{"/boot/vmlinuz", "is not a regular file"}, permanent: true},
		{name: "oversize", layers: []ggcrv1.Layer{layer(t, reg("boot/vmlinuz", strings.Repeat("k", 65)))}, kernel: "/boot/vmlinuz",
			want: []string{"/boot/vmlinuz", "65 bytes, more than the 64"}, permanent: true},
		{name: "dot-dot in the path", layers: []ggcrv1.Layer{layer(t, reg("vmlinuz", "k"))}, kernel: "/boot/../vmlinuz",
			want: []string{"kernelPath", `may not contain ".."`}, permanent: true},
		{name: "relative path", layers: []ggcrv1.Layer{layer(t, reg("vmlinuz", "k"))}, kernel: "vmlinuz",
			want: []string{"kernelPath", "must be an absolute path"}, permanent: true},
		{name: "traversal in the image", layers: []ggcrv1.Layer{layer(t, reg("../../boot/vmlinuz", "k"))}, kernel: "/boot/vmlinuz",
			want: []string{"reading kernelBoot image", "unsafe tar path"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			image := r.push(t, "bad"+string(rune('a'+i))+":1", tc.layers...)
			c := r.cache(t)
			_, err := c.kernelBoot(context.Background(), &v1.KernelBootContainer{Image: image, KernelPath: tc.kernel})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.Contains(tc.name, "path") && !strings.Contains(err.Error(), image) {
				t.Errorf("error %q does not name the image", err)
			}
			var perm *permanentError
			if errors.As(err, &perm) != tc.permanent {
				t.Errorf("permanent = %v, want %v (%v)", !tc.permanent, tc.permanent, err)
			}
			if found, _ := filepath.Glob(filepath.Join(c.dir, "sha256-*", kernelBootDir, "*")); len(found) > 0 {
				t.Errorf("files extracted despite the error: %v", found)
			}
		})
	}
}

// TestKernelBootBadReference: an image reference that cannot be parsed fails for good.
func TestKernelBootBadReference(t *testing.T) {
	c := newImageCache(t.TempDir(), nil)
	_, err := c.kernelBoot(context.Background(), &v1.KernelBootContainer{Image: "Not A Reference", KernelPath: "/vmlinuz"})
	var perm *permanentError
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), `"Not A Reference"`) {
		t.Errorf("error %v, want a permanent one naming the image", err)
	}
}

// TestKernelBootPullPolicyNever: an image not on the node is not pulled.
func TestKernelBootPullPolicyNever(t *testing.T) {
	r := newTestRegistry(t)
	image := r.push(t, "kb:1", layer(t, reg("vmlinuz", "k")))
	_, err := r.cache(t).kernelBoot(context.Background(), &v1.KernelBootContainer{Image: image, KernelPath: "/vmlinuz", ImagePullPolicy: v1.PullNever})
	if err == nil || !strings.Contains(err.Error(), "imagePullPolicy is Never") {
		t.Errorf("error %v, want one about imagePullPolicy Never", err)
	}
}

// TestContainerDiskAndKernelBootShareADigest: one image used both ways keeps both its disk and
// its kernel in its digest directory, in either order.
func TestContainerDiskAndKernelBootShareADigest(t *testing.T) {
	r := newTestRegistry(t)
	image := r.push(t, "both:1", layer(t, reg("disk/disk.img", "disk"), reg("boot/vmlinuz", "k")))
	for _, kernelFirst := range []bool{true, false} {
		c := r.cache(t)
		steps := []func() (string, error){
			func() (string, error) {
				f, err := c.kernelBoot(context.Background(), &v1.KernelBootContainer{Image: image, KernelPath: "/boot/vmlinuz"})
				if err != nil {
					return "", err
				}
				return f.Kernel, nil
			},
			func() (string, error) {
				return c.disk(context.Background(), &v1.ContainerDiskSource{Image: image}, nil)
			},
		}
		if !kernelFirst {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if _, err := step(); err != nil {
				t.Fatalf("kernel first %v: %v", kernelFirst, err)
			}
		}
		for _, step := range steps {
			p, err := step()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("kernel first %v: %v", kernelFirst, err)
			}
		}
	}
}
