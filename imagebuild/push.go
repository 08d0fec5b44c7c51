package imagebuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// BaseRepository is where artifacts/base names Vireo's images (ghcr.io/vireo-dev/<image>:latest);
// an overlay moves them to the registry they were pushed to.
const BaseRepository = "ghcr.io/vireo-dev"

// Pushed is one image in a registry.
type Pushed struct {
	Name string
	// Ref is the image by digest, e.g. registry.example.com/vireo/vireo-launcher@sha256:...
	Ref    string
	Digest string
}

// Push copies the images in results to registry (host[:port]/path, e.g.
// registry.example.com/vireo), tagged with the build's version and latest, with the
// credentials of the Docker config (~/.docker/config.json) as crane and kubectl's tools do.
// insecure allows plain HTTP.
func Push(ctx context.Context, results []Result, registry string, insecure bool) ([]Pushed, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var pushed []Pushed
	for _, r := range results {
		idx, err := layout.ImageIndexFromPath(r.Layout)
		if err != nil {
			return nil, err
		}
		hash, err := v1.NewHash(r.Digest)
		if err != nil {
			return nil, err
		}
		img, err := idx.Image(hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Layout, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		repo := strings.TrimSuffix(registry, "/") + "/" + r.Name
		for _, tag := range []string{cf.Config.Labels["org.opencontainers.image.version"], "latest"} {
			ref, err := name.NewTag(repo+":"+tag, opts...)
			if err != nil {
				return nil, fmt.Errorf("registry %q: %w", registry, err)
			}
			if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
				return nil, fmt.Errorf("pushing %s: %w", ref, err)
			}
		}
		pushed = append(pushed, Pushed{Name: r.Name, Ref: repo + "@" + r.Digest, Digest: r.Digest})
	}
	return pushed, nil
}

// WriteOverlay writes a kustomize overlay into dir that installs artifacts/base (base, a path)
// with Vireo's images as pushed: the images' references by digest, and the controller's
// launcher and importer images to match.
func WriteOverlay(dir, base string, pushed []Pushed) error {
	rel, err := filepath.Rel(dir, base)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Vireo's images as pushed by `make push` (imagebuild): artifacts/base with every image by digest.\n")
	fmt.Fprintf(&b, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\nimages:\n", filepath.ToSlash(rel))
	refs := map[string]string{}
	for _, p := range pushed {
		if !strings.HasPrefix(p.Name, "vireo-") {
			continue
		}
		newName, _, _ := strings.Cut(p.Ref, "@")
		fmt.Fprintf(&b, "  - name: %s/%s\n    newName: %s\n    digest: %s\n", BaseRepository, p.Name, newName, p.Digest)
		refs[p.Name] = p.Ref
	}
	if refs["vireo-launcher"] != "" || refs["vireo-importer"] != "" {
		b.WriteString(controllerImagesPatch(refs["vireo-launcher"], refs["vireo-importer"]))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o644)
}

// controllerImagesPatch sets the controller's LAUNCHER_IMAGE and IMPORTER_IMAGE (the images of
// the Pods it creates, which kustomize's images: cannot reach: they are not a container's).
func controllerImagesPatch(launcher, importer string) string {
	var env strings.Builder
	for _, e := range [][2]string{{"LAUNCHER_IMAGE", launcher}, {"IMPORTER_IMAGE", importer}} {
		if e[1] != "" {
			fmt.Fprintf(&env, "                - name: %s\n                  value: %s\n", e[0], e[1])
		}
	}
	return "patches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata: {name: vireo-controller, namespace: vireo-system}\n" +
		"      spec:\n        template:\n          spec:\n            containers:\n              - name: vireo-controller\n                env:\n" +
		strings.ReplaceAll(env.String(), "                ", "                  ")
}
