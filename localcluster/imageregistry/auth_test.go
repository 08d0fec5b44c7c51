package imageregistry

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// TestPrivateRepositories: private/ repositories need the generated credentials, for pushes and
// pulls; other repositories and the version check stay anonymous.
func TestPrivateRepositories(t *testing.T) {
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "registry-credentials.json")
	addr, _ := serve(t, Config{Storage: filepath.Join(dir, "blobs"), Images: filepath.Join(dir, "none"), CredentialsFile: credsFile})
	// The registry answers once it has loaded its images and credentials.
	resp, err := http.Get("http://" + addr + "/v2/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("version check: %v %v", resp, err)
	}
	resp.Body.Close()
	creds, err := ReadCredentials(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(credsFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("credentials file: %v, %v; want mode 0600", st, err)
	}
	if again, err := LoadOrCreateCredentials(credsFile); err != nil || again != creds {
		t.Errorf("credentials changed on reload: %v", err)
	}
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	good := remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: creds.Password}))
	wrong := remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: "wrong"}))
	private, _ := name.ParseReference(addr+"/private/x:1", name.Insecure)
	public, _ := name.ParseReference(addr+"/public/x:1", name.Insecure)
	if err := remote.Write(private, img); !isUnauthorized(err) {
		t.Errorf("anonymous push to private/: %v, want 401", err)
	}
	if err := remote.Write(private, img, good); err != nil {
		t.Fatalf("push with the credentials: %v", err)
	}
	if err := remote.Write(public, img); err != nil {
		t.Fatalf("anonymous push elsewhere: %v", err)
	}
	for _, tc := range []struct {
		name string
		opts []remote.Option
		ok   bool
	}{{"anonymous", nil, false}, {"wrong password", []remote.Option{wrong}, false}, {"credentials", []remote.Option{good}, true}} {
		_, err := remote.Head(private, tc.opts...)
		if tc.ok && err != nil || !tc.ok && !isUnauthorized(err) {
			t.Errorf("%s: HEAD private/x:1 = %v", tc.name, err)
		}
	}
	if _, err := remote.Get(public); err != nil {
		t.Errorf("anonymous pull of public/x:1: %v", err)
	}
}

func isUnauthorized(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusUnauthorized
}
