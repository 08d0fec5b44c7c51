package nodeagent

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestPullKeychainMatching(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("encoded:pw"))
	config := `{"auths":{
		"reg.example.com:5000": {"username":"port","password":"p"},
		"reg.example.com": {"username":"noport","password":"p"},
		"reg.example.com/team-a": {"username":"team-a","password":"p"},
		"*.mirror.example.org": {"auth":"` + auth + `"},
		"https://index.docker.io/v1/": {"username":"hub","password":"p"}
	}}`
	kc, err := newPullKeychain("regcred", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ image, wantUser string }{
		{"reg.example.com:5000/x/disk:1", "port"},
		{"reg.example.com/x/disk:1", "noport"},
		{"reg.example.com/team-a/disk:1", "team-a"},
		{"reg.example.com/team-ab/disk:1", "noport"}, // a path prefix is whole components
		{"reg.example.com:5001/x/disk:1", ""},        // ports must match
		{"eu.mirror.example.org/disk:1", "encoded"},
		{"a.eu.mirror.example.org/disk:1", ""}, // a glob matches one part only
		{"mirror.example.org/disk:1", ""},
		{"library/busybox:1", "hub"},
		{"docker.io/someone/disk:1", "hub"},
		{"other.example.com/disk:1", ""},
	} {
		ref, err := name.ParseReference(tc.image)
		if err != nil {
			t.Fatal(err)
		}
		a, err := kc.Resolve(ref.Context())
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := a.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if tc.wantUser == "" {
			if a != authn.Anonymous {
				t.Errorf("%s: got user %q, want anonymous", tc.image, cfg.Username)
			}
			continue
		}
		if cfg.Username != tc.wantUser {
			t.Errorf("%s: user %q, want %q", tc.image, cfg.Username, tc.wantUser)
		}
		if tc.wantUser == "encoded" && cfg.Password != "pw" {
			t.Errorf("%s: password from auth = %q", tc.image, cfg.Password)
		}
	}
}

func TestPullKeychainErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{"auths":`, `image pull secret "s": .dockerconfigjson is not valid JSON`},
		{"no auths", `{"credHelpers":{}}`, `no "auths" entries`},
		{"bad auth", `{"auths":{"r.example":{"auth":"!!"}}}`, `registry "r.example": "auth" is not base64`},
	} {
		_, err := newPullKeychain("s", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "!!") {
			t.Errorf("%s: the error repeats the secret's content: %v", tc.name, err)
		}
	}
}
