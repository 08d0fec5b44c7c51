package nodeagent

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// diskFile is the name of an image's disk in its cache directory.
const diskFile = "disk"

// imageCache is the node's content-addressed cache of containerDisk images: one directory per
// image digest (sha256-<hex>/disk), shared read-only by every VMI that uses the image. The
// launcher never pulls: it holds no credentials and reaches the cache read-only.
type imageCache struct {
	dir string
	// insecure are registries (host[:port]) reached over plain HTTP.
	insecure map[string]bool

	mu    sync.Mutex
	pulls map[string]*sync.Mutex // per image reference: one pull at a time
}

func newImageCache(dir string, insecure []string) *imageCache {
	c := &imageCache{dir: dir, insecure: map[string]bool{}, pulls: map[string]*sync.Mutex{}}
	for _, r := range insecure {
		c.insecure[r] = true
	}
	return c
}

// ErrImagePull is the reason a VMI reports when its containerDisk cannot be pulled.
const ReasonErrImagePull = "ErrImagePull"

// disk returns the cached disk of a containerDisk volume, pulling the image when the pull
// policy asks for it (KubeVirt's default: Always for :latest or no tag, else IfNotPresent),
// with auth's credentials (nil: anonymously). A cached private image is used only after auth
// proved access to it (proveAccess).
func (c *imageCache) disk(ctx context.Context, src *v1.ContainerDiskSource, auth *pullAuth) (string, error) {
	ref, err := c.parse(src.Image)
	if err != nil {
		return "", fmt.Errorf("containerDisk image %q: %w", src.Image, err)
	}
	lock := c.pullLock(ref.Name())
	lock.Lock()
	defer lock.Unlock()
	policy := src.ImagePullPolicy
	if policy == "" {
		policy = v1.PullIfNotPresent
		if tag, ok := ref.(name.Tag); ok && tag.TagStr() == "latest" {
			policy = v1.PullAlways
		}
	}
	if policy != v1.PullAlways {
		if p, ok := c.cached(ref); ok {
			if err := c.proveAccess(ctx, src.Image, ref, p, auth); err != nil {
				return "", err
			}
			return p, nil
		}
		if policy == v1.PullNever {
			return "", fmt.Errorf("containerDisk image %q is not on this node and its imagePullPolicy is Never", src.Image)
		}
	}
	desc, err := remote.Get(ref, auth.options(ctx)...)
	if err != nil {
		return "", fmt.Errorf("pulling containerDisk image %q %s: %w", src.Image, auth.describe(), err)
	}
	digestDir := filepath.Join(c.dir, "sha256-"+desc.Digest.Hex)
	if auth != nil {
		if err := c.markPrivate(digestDir); err != nil {
			return "", err
		}
	}
	if err := c.recordTag(ref, digestDir); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(digestDir, diskFile)); err == nil {
		return filepath.Join(digestDir, diskFile), nil
	}
	img, err := desc.Image()
	if err != nil {
		return "", fmt.Errorf("containerDisk image %q: %w", src.Image, err)
	}
	if err := c.extract(mutate.Extract(img), src, digestDir); err != nil {
		return "", err
	}
	return filepath.Join(digestDir, diskFile), nil
}

func (c *imageCache) parse(image string) (name.Reference, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, err
	}
	if c.insecure[ref.Context().RegistryStr()] {
		return name.ParseReference(image, name.Insecure)
	}
	return ref, nil
}

func (c *imageCache) pullLock(ref string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pulls[ref] == nil {
		c.pulls[ref] = &sync.Mutex{}
	}
	return c.pulls[ref]
}

// tagFile records which digest a reference pointed to when it was last pulled.
func (c *imageCache) tagFile(ref name.Reference) string {
	sum := sha256.Sum256([]byte(ref.Name()))
	return filepath.Join(c.dir, "refs", hex.EncodeToString(sum[:]))
}

func (c *imageCache) cached(ref name.Reference) (string, bool) {
	var digestDir string
	if d, ok := ref.(name.Digest); ok {
		digestDir = filepath.Join(c.dir, "sha256-"+strings.TrimPrefix(d.DigestStr(), "sha256:"))
	} else {
		data, err := os.ReadFile(c.tagFile(ref))
		if err != nil {
			return "", false
		}
		digestDir = filepath.Join(c.dir, filepath.Base(strings.TrimSpace(string(data))))
	}
	p := filepath.Join(digestDir, diskFile)
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}

func (c *imageCache) recordTag(ref name.Reference, digestDir string) error {
	f := c.tagFile(ref)
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return err
	}
	return os.WriteFile(f, []byte(filepath.Base(digestDir)+"\n"), 0o600)
}

// extract copies the image's disk (src.Path, or the one file under /disk/) from the image's
// flattened file system into digestDir/disk, which appears only complete.
func (c *imageCache) extract(fs io.ReadCloser, src *v1.ContainerDiskSource, digestDir string) error {
	defer fs.Close()
	tmp, err := os.MkdirTemp(c.dir, ".pull-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	want := strings.TrimPrefix(path.Clean("/"+src.Path), "/")
	tr := tar.NewReader(fs)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if src.Path != "" {
				return fmt.Errorf("containerDisk image %q has no file %s", src.Image, src.Path)
			}
			return fmt.Errorf("containerDisk image %q has no disk under /disk/", src.Image)
		}
		if err != nil {
			return fmt.Errorf("reading containerDisk image %q: %w", src.Image, err)
		}
		file := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		match := file == want
		if src.Path == "" {
			match = path.Dir(file) == "disk"
		}
		if hdr.Typeflag != tar.TypeReg || !match {
			continue
		}
		if err := writeFile(filepath.Join(tmp, diskFile), tr); err != nil {
			return fmt.Errorf("extracting the disk of %q: %w", src.Image, err)
		}
		if err := os.Chmod(tmp, 0o755); err != nil {
			return err
		}
		return placeDisk(tmp, digestDir)
	}
}

func writeFile(p string, r io.Reader) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isNotEmpty reports a rename onto a directory another pull completed first.
func isNotEmpty(err error) bool {
	var le *os.LinkError
	return errors.As(err, &le) && strings.Contains(le.Err.Error(), "not empty")
}
