package importer

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pushImage pushes an image of one layer holding files (path -> content) to the registry at
// host and returns its reference.
func pushImage(t *testing.T, host, repo string, files map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for p, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o444, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	ref := host + "/" + repo + ":1"
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestImportFromRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	qcow2, err := os.ReadFile(fixture(t, "qcow2.xz"))
	if err != nil {
		t.Fatal(err)
	}
	ref := pushImage(t, host, "tiny", map[string][]byte{"disk/tiny.qcow2.xz": qcow2, "etc/hostname": []byte("x")})

	o := options(t, &RegistrySource{Image: "docker://" + ref, Insecure: []string{host}})
	res, err := Import(testContext(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatQCOW2 || res.Compression != CompressionXZ {
		t.Errorf("result %+v", res)
	}
	checkDisk(t, o, rawContent())

	empty := pushImage(t, host, "nodisk", map[string][]byte{"etc/hostname": []byte("x")})
	err = importFails(t, options(t, &RegistrySource{Image: empty, Insecure: []string{host}}), nil, "no disk under /disk/")
	if IsTransient(err) {
		t.Error("an image without a disk is a transient failure")
	}
	err = importFails(t, options(t, &RegistrySource{Image: host + "/nothing:1", Insecure: []string{host}}), nil, "nothing:1")
	if IsTransient(err) {
		t.Error("an unknown image is a transient failure")
	}
	importFails(t, options(t, &RegistrySource{Image: "Not A Reference"}), nil, "Not A Reference")
}
