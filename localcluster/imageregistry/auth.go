package imageregistry

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// PrivatePrefix starts the repositories that need credentials: the registry serves each guest's
// containerDisk a second time as PrivatePrefix + ContainerDiskRepository(guest), readable only
// with the installation's Credentials (HTTP basic auth), for tests of image pull secrets.
const PrivatePrefix = "private/"

// PrivateContainerDiskImage is the reference of guest's containerDisk in the private repository
// of the registry at address, e.g. 10.250.0.1:5000/private/vireo/tiny-containerdisk:latest.
func PrivateContainerDiskImage(address, guest string) string {
	return address + "/" + PrivatePrefix + ContainerDiskRepository(guest) + ":" + Tag
}

// Credentials are the user and password of the registry's private repositories, generated once
// per installation.
type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LoadOrCreateCredentials reads the credentials file at path, creating it (mode 0600, random
// user and password) when it does not exist yet.
func LoadOrCreateCredentials(path string) (Credentials, error) {
	creds, err := ReadCredentials(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return creds, err
	}
	user, pass := make([]byte, 4), make([]byte, 18)
	if _, err := rand.Read(user); err != nil {
		return Credentials{}, err
	}
	if _, err := rand.Read(pass); err != nil {
		return Credentials{}, err
	}
	creds = Credentials{Username: "vireo-" + hex.EncodeToString(user), Password: base64.RawURLEncoding.EncodeToString(pass)}
	data, err := json.Marshal(creds)
	if err != nil {
		return Credentials{}, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return ReadCredentials(path) // another process made it first
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("registry credentials: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return Credentials{}, err
	}
	return creds, f.Close()
}

// ReadCredentials reads the credentials file at path.
func ReadCredentials(path string) (Credentials, error) {
	var creds Credentials
	data, err := os.ReadFile(path)
	if err != nil {
		return creds, err
	}
	if err := json.Unmarshal(data, &creds); err != nil || creds.Username == "" || creds.Password == "" {
		return Credentials{}, fmt.Errorf("registry credentials %s: want JSON with a username and a password", path)
	}
	return creds, nil
}

// requireAuth answers requests for private repositories only with the right basic-auth
// credentials, as a registry with basic auth does (401 and a Basic challenge otherwise).
// Everything else, the /v2/ version check included, stays anonymous.
func requireAuth(h http.Handler, creds Credentials) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/"+PrivatePrefix) {
			user, pass, ok := r.BasicAuth()
			userOK := subtle.ConstantTimeCompare([]byte(user), []byte(creds.Username)) == 1
			passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(creds.Password)) == 1
			if !ok || !userOK || !passOK {
				w.Header().Set("WWW-Authenticate", `Basic realm="vireo-local"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required for ` + PrivatePrefix + `repositories"}]}` + "\n"))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
