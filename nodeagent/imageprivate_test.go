package nodeagent

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster/imageregistry"
)

// privateRegistry serves vireo-local's registry (private/ behind basic auth) on loopback and
// returns its address and credentials.
func privateRegistry(t *testing.T) (string, imageregistry.Credentials) {
	t.Helper()
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "creds.json")
	h, err := imageregistry.New(context.Background(), imageregistry.Config{Storage: filepath.Join(dir, "blobs"),
		Images: filepath.Join(dir, "none"), CredentialsFile: credsFile})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	creds, err := imageregistry.ReadCredentials(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	return l.Addr().String(), creds
}

// keychainFor is the pull auth of a dockerconfigjson Secret named secret for registry addr.
func keychainFor(t *testing.T, secret, addr, user, pass string) *pullAuth {
	t.Helper()
	data, err := json.Marshal(map[string]any{"auths": map[string]any{addr: map[string]string{"username": user, "password": pass}}})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := newPullKeychain(secret, data)
	if err != nil {
		t.Fatal(err)
	}
	return &pullAuth{secret: secret, keychain: kc}
}

// TestPrivateImageRule: an image pulled with credentials is private in the node's cache; a VMI
// that names it with IfNotPresent gets the cached copy only after its own credentials proved
// access, and anonymous or wrong credentials fail with errors naming the image and the Secret.
func TestPrivateImageRule(t *testing.T) {
	addr, creds := privateRegistry(t)
	img, err := crane.Image(map[string][]byte{"disk/disk.img": []byte("private disk")})
	if err != nil {
		t.Fatal(err)
	}
	image := addr + "/private/team/disk:1"
	ref, _ := name.ParseReference(image, name.Insecure)
	basic := authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: creds.Password})
	if err := remote.Write(ref, img, remote.WithAuth(basic)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cache := newImageCache(t.TempDir(), []string{addr})
	src := &v1.ContainerDiskSource{Image: image, ImagePullPolicy: v1.PullIfNotPresent}

	// Without credentials the pull fails and says so.
	if _, err := cache.disk(ctx, src, nil); err == nil || !strings.Contains(err.Error(), image) || !strings.Contains(err.Error(), "without credentials") {
		t.Errorf("anonymous pull = %v, want an error naming the image", err)
	}
	// With the right Secret: pulled, and marked private.
	owner := keychainFor(t, "regcred", addr, creds.Username, creds.Password)
	disk, err := cache.disk(ctx, src, owner)
	if err != nil {
		t.Fatalf("pull with credentials: %v", err)
	}
	if data, err := os.ReadFile(disk); err != nil || string(data) != "private disk" {
		t.Fatalf("cached disk %s: %q, %v", disk, data, err)
	}
	if !cache.isPrivate(filepath.Dir(disk)) {
		t.Error("an image pulled with credentials is not marked private")
	}
	// From the cache (IfNotPresent): another VMI without credentials, or with wrong ones, is
	// refused; one with valid credentials of its own gets the cached disk.
	if _, err := cache.disk(ctx, src, nil); err == nil || !strings.Contains(err.Error(), "is private on this node") {
		t.Errorf("cached private image without credentials = %v, want refused", err)
	}
	wrong := keychainFor(t, "stolen", addr, creds.Username, "guess")
	if _, err := cache.disk(ctx, src, wrong); err == nil || !strings.Contains(err.Error(), `image pull secret "stolen"`) || !strings.Contains(err.Error(), image) {
		t.Errorf("cached private image with wrong credentials = %v, want refused naming image and Secret", err)
	}
	other := keychainFor(t, "their-own", addr, creds.Username, creds.Password)
	if again, err := cache.disk(ctx, src, other); err != nil || again != disk {
		t.Errorf("cached private image with valid credentials = %q, %v; want %q", again, err, disk)
	}
	// A public image stays usable from the cache without credentials.
	pubRef, _ := name.ParseReference(addr+"/public/disk:1", name.Insecure)
	if err := remote.Write(pubRef, img); err != nil {
		t.Fatal(err)
	}
	pub := &v1.ContainerDiskSource{Image: addr + "/public/disk:1", ImagePullPolicy: v1.PullIfNotPresent}
	if _, err := cache.disk(ctx, pub, nil); err != nil {
		t.Errorf("public image: %v", err)
	}
}
