// Package imageregistry is vireo-local's OCI registry: go-containerregistry's registry with
// its blobs on disk (they survive restarts) and its manifests in memory, preloaded on every
// start with the containerDisks and kernelBoot images of the test guest images, so that local
// nodes pull vireo/<guest>-containerdisk:latest and vireo/<guest>-kernelboot:latest as they
// would from any registry.
package imageregistry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"k8s.io/klog/v2"
)

// Repository names: the containerDisk layout <images>/<guest>/containerdisk (as
// test/images writes it) is served as <RepositoryPrefix><guest><ContainerDiskSuffix>:<Tag>.
const (
	RepositoryPrefix    = "vireo/"
	ContainerDiskSuffix = "-containerdisk"
	Tag                 = "latest"
	layoutDir           = "containerdisk"
	refNameAnnotation   = "org.opencontainers.image.ref.name"
)

// The kernelBoot layout <images>/<guest>/kernelboot (kernel at /boot/vmlinuz, initrd at
// /boot/initrd.img, as test/images writes it) is served as <RepositoryPrefix><guest><KernelBootSuffix>:<Tag>.
const (
	KernelBootSuffix = "-kernelboot"
	kernelBootLayout = "kernelboot"
)

// ContainerDiskRepository is the repository guest's containerDisk is served under.
func ContainerDiskRepository(guest string) string {
	return RepositoryPrefix + guest + ContainerDiskSuffix
}

// ContainerDiskImage is the image reference of guest's containerDisk in the registry at
// address (host:port), e.g. 10.250.0.1:5000/vireo/tiny-containerdisk:latest.
func ContainerDiskImage(address, guest string) string {
	return address + "/" + ContainerDiskRepository(guest) + ":" + Tag
}

// KernelBootImage is the image reference of guest's kernelBoot image in the registry at address.
func KernelBootImage(address, guest string) string {
	return address + "/" + RepositoryPrefix + guest + KernelBootSuffix + ":" + Tag
}

// Config configures the registry.
type Config struct {
	// Address is where it listens (host:port), plain HTTP.
	Address string
	// Storage is the blobs' directory.
	Storage string
	// Images is the guest images' directory (the repository's _output/images); each
	// <Images>/<guest>/containerdisk OCI layout is loaded on start.
	Images string
	// OCIImages are the project's images directories (make oci: _output/oci), loaded on start
	// in order: each <dir>/<name> OCI layout as vireo/<name>:latest (a later directory's
	// image takes the tag; every image stays served by its digest).
	OCIImages []string
	// CredentialsFile holds the Credentials of the private repositories (PrivatePrefix),
	// created when missing. Empty serves no private repositories.
	CredentialsFile string
}

// ListenAndServe serves the registry at cfg.Address until ctx ends.
func ListenAndServe(ctx context.Context, cfg Config) error {
	l, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return Serve(ctx, l, cfg)
}

// Serve loads the guest images, then serves the registry on l until ctx ends. Connections
// wait in l's backlog while the images load, so a client that gets an answer finds them.
func Serve(ctx context.Context, l net.Listener, cfg Config) error {
	defer l.Close()
	h, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	klog.InfoS("registry serving", "address", l.Addr().String(), "storage", cfg.Storage)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// New returns the registry's handler with the guest images of cfg.Images loaded. A layout
// that cannot be loaded is logged and skipped.
func New(ctx context.Context, cfg Config) (http.Handler, error) {
	if err := os.MkdirAll(cfg.Storage, 0o755); err != nil {
		return nil, fmt.Errorf("registry storage: %w", err)
	}
	blobs := registry.NewDiskBlobHandler(cfg.Storage)
	// go-containerregistry logs every request; logRequests logs the ones worth reading.
	h := registry.New(registry.WithBlobHandler(blobs), registry.Logger(log.New(io.Discard, "", 0)))
	layouts, err := filepath.Glob(filepath.Join(cfg.Images, "*", layoutDir))
	if err != nil {
		return nil, err
	}
	kernelBoots, err := filepath.Glob(filepath.Join(cfg.Images, "*", kernelBootLayout))
	if err != nil {
		return nil, err
	}
	for _, dir := range append(layouts, kernelBoots...) {
		repo := ContainerDiskRepository(filepath.Base(filepath.Dir(dir)))
		if filepath.Base(dir) == kernelBootLayout {
			repo = RepositoryPrefix + filepath.Base(filepath.Dir(dir)) + KernelBootSuffix
		}
		repos := []string{repo}
		if cfg.CredentialsFile != "" {
			repos = append(repos, PrivatePrefix+repo)
		}
		for _, repo := range repos {
			digest, err := load(ctx, h, blobs, dir, repo)
			if err != nil {
				klog.ErrorS(err, "cannot load a guest image; skipping it", "layout", dir)
				continue
			}
			klog.InfoS("loaded guest image", "image", repo+":"+Tag, "digest", digest, "layout", dir)
		}
	}
	if len(layouts) == 0 {
		klog.InfoS("no guest images to load (run `make images`)", "dir", cfg.Images)
	}
	for _, dir := range cfg.OCIImages {
		loadProjectImages(ctx, h, blobs, dir)
	}
	if cfg.CredentialsFile == "" {
		return logRequests(h), nil
	}
	creds, err := LoadOrCreateCredentials(cfg.CredentialsFile)
	if err != nil {
		return nil, err
	}
	return logRequests(requireAuth(h, creds)), nil
}

// load copies the image tagged latest (or the only image) of the OCI layout dir into the
// blob store, unless its blobs are there already, and puts its manifest as repo:latest.
func load(ctx context.Context, h http.Handler, blobs registry.BlobHandler, dir, repo string) (v1.Hash, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Hash{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	desc, err := pickImage(im)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := storeBlobs(ctx, blobs, img, repo); err != nil {
		return v1.Hash{}, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return v1.Hash{}, err
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPut, "/v2/"+repo+"/manifests/"+Tag, bytes.NewReader(raw))
	req.Header.Set("Content-Type", string(mt))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		return v1.Hash{}, fmt.Errorf("putting the manifest of %s: HTTP %d: %s", repo, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return desc.Digest, nil
}

// pickImage chooses the layout's image manifest tagged Tag, else its only one.
func pickImage(im *v1.IndexManifest) (v1.Descriptor, error) {
	var images []v1.Descriptor
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		if d.Annotations[refNameAnnotation] == Tag {
			return d, nil
		}
		images = append(images, d)
	}
	if len(images) != 1 {
		return v1.Descriptor{}, fmt.Errorf("the layout has %d image manifests and none tagged %s", len(images), Tag)
	}
	return images[0], nil
}

// storeBlobs puts the image's config and layers into the blob store, skipping those it holds.
func storeBlobs(ctx context.Context, blobs registry.BlobHandler, img v1.Image, repo string) error {
	put, ok := blobs.(registry.BlobPutHandler)
	if !ok {
		return fmt.Errorf("the blob store cannot store blobs")
	}
	stat, _ := blobs.(registry.BlobStatHandler)
	have := func(h v1.Hash) bool {
		if stat == nil {
			return false
		}
		_, err := stat.Stat(ctx, repo, h)
		return err == nil
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	if !have(cfgName) {
		raw, err := img.RawConfigFile()
		if err != nil {
			return err
		}
		if err := put.Put(ctx, repo, cfgName, io.NopCloser(bytes.NewReader(raw))); err != nil {
			return err
		}
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		if have(d) {
			continue
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		err = put.Put(ctx, repo, d, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("storing layer %s: %w", d, err)
		}
	}
	return nil
}

// loadProjectImages loads each OCI layout <dir>/<name> (make oci) as vireo/<name>:latest.
func loadProjectImages(ctx context.Context, h http.Handler, blobs registry.BlobHandler, dir string) {
	indexes, err := filepath.Glob(filepath.Join(dir, "*", "index.json"))
	if err != nil || len(indexes) == 0 {
		klog.InfoS("no project images to load (run `make oci`)", "dir", dir)
		return
	}
	for _, index := range indexes {
		layoutDir := filepath.Dir(index)
		repo := RepositoryPrefix + filepath.Base(layoutDir)
		digest, err := load(ctx, h, blobs, layoutDir, repo)
		if err != nil {
			klog.ErrorS(err, "cannot load a project image; skipping it", "layout", layoutDir)
			continue
		}
		klog.InfoS("loaded project image", "image", repo+":"+Tag, "digest", digest, "layout", layoutDir)
	}
}
