package imagedigest

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// TestPin: tags of a plain-HTTP registry resolve to the digest they name now; a reference that
// names a digest, an image with a pull secret and one the registry does not have are left out.
func TestPin(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.ParseReference(host+"/vireo/os:latest", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	disk := func(name, image, secret string) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: image, ImagePullSecret: secret}}}
	}
	vmi := &v1.VirtualMachineInstance{}
	vmi.Spec.Volumes = []v1.Volume{
		disk("os", host+"/vireo/os:latest", ""),
		disk("pinned", host+"/vireo/os@"+digest.String(), ""),
		disk("private", host+"/vireo/os:latest", "regcred"),
		disk("missing", host+"/vireo/none:1", ""),
	}
	vmi.Spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: host + "/vireo/os:latest"}}}
	r := &Resolver{Insecure: []string{host}}
	want := map[string]string{
		"os":                                host + "/vireo/os@" + digest.String(),
		launcherpodapi.KernelBootVolumeName: host + "/vireo/os@" + digest.String(),
	}
	if diff := cmp.Diff(want, r.Pin(t.Context(), vmi)); diff != "" {
		t.Errorf("Pin (-want +got):\n%s", diff)
	}
	if got, err := r.Resolve(t.Context(), "127.0.0.1:1/vireo/os:latest"); err == nil {
		t.Errorf("resolving from a registry that does not answer: %q", got)
	}
}
