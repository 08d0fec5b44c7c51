package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// privateDir is the cache index directory that marks private images: an empty file
// privateDir/sha256-<hex> for each digest ever pulled with credentials. Only the node agent
// reads it (mode 0700); it holds no credentials.
const privateDir = "private"

// pullAuth is how one VMI's containerDisk is pulled: anonymously (nil), or with the
// credentials of its image pull secret.
type pullAuth struct {
	// secret is the image pull secret's name, for messages.
	secret   string
	keychain authn.Keychain
}

// options are go-containerregistry's options for a pull with these credentials.
func (a *pullAuth) options(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx)}
	if a != nil {
		opts = append(opts, remote.WithAuthFromKeychain(a.keychain))
	}
	return opts
}

// describe says which credentials were used, for errors.
func (a *pullAuth) describe() string {
	if a == nil {
		return "without credentials (the volume names no imagePullSecret)"
	}
	return fmt.Sprintf("with the credentials of image pull secret %q", a.secret)
}

// privateMarker is the index file of the digest directory digestDir (sha256-<hex>).
func (c *imageCache) privateMarker(digestDir string) string {
	return filepath.Join(c.dir, privateDir, filepath.Base(digestDir))
}

// markPrivate records that digestDir's image was pulled with credentials. It is written before
// the image is extracted, so no VMI ever finds the image in the cache unmarked.
func (c *imageCache) markPrivate(digestDir string) error {
	marker := c.privateMarker(digestDir)
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("marking a private image in the cache: %w", err)
	}
	return f.Close()
}

// isPrivate reports whether digestDir's image was ever pulled with credentials.
func (c *imageCache) isPrivate(digestDir string) bool {
	_, err := os.Lstat(c.privateMarker(digestDir))
	return err == nil
}

// proveAccess lets a VMI use a cached private image only when its own credentials (or none)
// can read that image's manifest from the registry: a HEAD of the repository at the cached
// digest. So one namespace cannot run another's private image just by naming it.
func (c *imageCache) proveAccess(ctx context.Context, image string, ref name.Reference, diskPath string, auth *pullAuth) error {
	digestDir := filepath.Dir(diskPath)
	if !c.isPrivate(digestDir) {
		return nil
	}
	hex, ok := strings.CutPrefix(filepath.Base(digestDir), "sha256-")
	if !ok {
		return fmt.Errorf("containerDisk image %q: unexpected cache entry %s", image, filepath.Base(digestDir))
	}
	_, err := remote.Head(ref.Context().Digest("sha256:"+hex), auth.options(ctx)...)
	if err != nil {
		return fmt.Errorf("containerDisk image %q is private on this node (it was pulled with credentials), and access to it %s could not be proven: %w",
			image, auth.describe(), err)
	}
	return nil
}

// pullAuths asks the launcher for the image pull secrets of vmi's containerDisk volumes (its Pod
// mounts them; the node agent may read no Secret) and returns each volume's credentials. They
// live in memory for this handover only.
func pullAuths(ctx context.Context, vmi *v1.VirtualMachineInstance, client *protocol.Client) (map[string]*pullAuth, error) {
	secrets := map[string]string{}
	var volumes []string
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil && vol.ContainerDisk.ImagePullSecret != "" {
			secrets[vol.Name] = vol.ContainerDisk.ImagePullSecret
			volumes = append(volumes, vol.Name)
		}
	}
	if len(volumes) == 0 {
		return nil, nil
	}
	configs, err := client.PullSecrets(ctx, volumes)
	if err != nil {
		return nil, fmt.Errorf("getting the image pull secrets of volumes %s from the launcher: %w", strings.Join(volumes, ", "), err)
	}
	out := map[string]*pullAuth{}
	for _, vol := range volumes {
		data, ok := configs[vol]
		if !ok {
			return nil, fmt.Errorf("volume %s: the launcher returned no image pull secret %q", vol, secrets[vol])
		}
		kc, err := newPullKeychain(secrets[vol], data)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", vol, err)
		}
		out[vol] = &pullAuth{secret: secrets[vol], keychain: kc}
	}
	return out, nil
}
