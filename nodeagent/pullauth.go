package nodeagent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// dockerHubHosts are the names Docker Hub goes by in a docker config; go-containerregistry
// calls it index.docker.io.
var dockerHubHosts = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true}

const dockerHub = "index.docker.io"

// dockerConfigJSON is the content of a kubernetes.io/dockerconfigjson Secret.
type dockerConfigJSON struct {
	Auths map[string]dockerConfigEntry `json:"auths"`
}

// dockerConfigEntry is one registry's credentials in a docker config.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// credential is one parsed entry: a registry host (glob per dot-separated part, as kubelet
// matches), an optional port and path prefix, and its credentials.
type credential struct {
	key  string
	host string
	port string
	path string
	auth authn.AuthConfig
}

// pullKeychain is an authn.Keychain built from one VMI's image pull secret. It lives only as
// long as that VMI's pulls: credentials are never written to disk.
type pullKeychain struct {
	// secret is the Secret's name, for errors.
	secret string
	creds  []credential
}

// newPullKeychain parses the .dockerconfigjson of Secret secret. Errors name the Secret and
// never echo credentials.
func newPullKeychain(secret string, data []byte) (*pullKeychain, error) {
	var cfg dockerConfigJSON
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("image pull secret %q: .dockerconfigjson is not valid JSON (%v)", secret, jsonErrorKind(err))
	}
	if len(cfg.Auths) == 0 {
		return nil, fmt.Errorf("image pull secret %q: .dockerconfigjson has no \"auths\" entries", secret)
	}
	k := &pullKeychain{secret: secret}
	for key, e := range cfg.Auths {
		c, err := parseCredential(key, e)
		if err != nil {
			return nil, fmt.Errorf("image pull secret %q: %w", secret, err)
		}
		k.creds = append(k.creds, c)
	}
	// Kubelet's order: more specific keys (longer, as strings sorted in reverse) first.
	sort.Slice(k.creds, func(i, j int) bool { return k.creds[i].key > k.creds[j].key })
	return k, nil
}

// jsonErrorKind describes a JSON error without quoting the input.
func jsonErrorKind(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "unexpected structure"
}

// parseCredential parses one "auths" key (a host, host:port, host/path or URL) and its entry.
func parseCredential(key string, e dockerConfigEntry) (credential, error) {
	raw := key
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return credential{}, fmt.Errorf("registry %q in \"auths\" is not a host or URL", key)
	}
	c := credential{key: key, host: strings.ToLower(u.Hostname()), port: u.Port(), path: strings.Trim(u.Path, "/")}
	if dockerHubHosts[c.host] {
		// https://index.docker.io/v1/ is the classic key for all of Docker Hub.
		c.host = dockerHub
		if c.path == "v1" || c.path == "v2" {
			c.path = ""
		}
	}
	c.auth = authn.AuthConfig{Username: e.Username, Password: e.Password,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
	if e.Auth != "" && e.Username == "" && e.Password == "" {
		decoded, err := base64.StdEncoding.DecodeString(e.Auth)
		user, pass, ok := strings.Cut(string(decoded), ":")
		if err != nil || !ok {
			return credential{}, fmt.Errorf("registry %q: \"auth\" is not base64 of user:password", key)
		}
		c.auth.Username, c.auth.Password = user, pass
	}
	return c, nil
}

// matches reports whether the credential is for registry (host[:port]) and repository path,
// as kubelet matches: the same number of dot-separated host parts, each matching as a glob
// ("*.example.com"), the same port (none matches only none), and a path prefix.
func (c credential) matches(registry, repo string) bool {
	u, err := url.Parse("https://" + registry)
	if err != nil {
		return false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != c.port {
		return false
	}
	globParts, hostParts := strings.Split(c.host, "."), strings.Split(host, ".")
	if len(globParts) != len(hostParts) {
		return false
	}
	for i := range globParts {
		if ok, err := filepath.Match(globParts[i], hostParts[i]); err != nil || !ok {
			return false
		}
	}
	return c.path == "" || repo == c.path || strings.HasPrefix(repo, c.path+"/")
}

// Resolve implements authn.Keychain: the most specific matching entry's credentials, or
// anonymous access when none matches.
func (k *pullKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	registry := r.RegistryStr()
	repo := strings.TrimPrefix(strings.TrimPrefix(r.String(), registry), "/")
	for _, c := range k.creds {
		if c.matches(registry, repo) {
			return authn.FromConfig(c.auth), nil
		}
	}
	return authn.Anonymous, nil
}
