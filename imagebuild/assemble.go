package imagebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/vireo-dev/vireo/imagebuild/debian"
)

// PackagesFile lists an image's Debian packages (name=version, one a line), in the image.
const PackagesFile = "/usr/share/vireo/debian-packages"

// PackagesLabel is the image label with the same list, comma-separated.
const PackagesLabel = "dev.vireo.debian-packages"

// refNameAnnotation tags the image in its OCI layout (vireo-local's registry serves it as :latest).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// buildRecord is what Out/<image>/build.json remembers of the last build.
type buildRecord struct {
	Key    string `json:"key"`
	Result Result `json:"result"`
}

// cachedLayer is a layer file in the cache with its unpacked size.
type cachedLayer struct {
	Path          string
	UnpackedBytes int64
}

// image builds one image unless its layout is current.
func (b *builder) image(ctx context.Context, im Image) (Result, error) {
	bin, err := b.goBinary(ctx, im)
	if err != nil {
		return Result{}, err
	}
	var pkgs []debian.Package
	var layers []cachedLayer
	if len(im.Packages) > 0 {
		if pkgs, err = b.closure(ctx, im.Packages); err != nil {
			return Result{}, err
		}
		l, err := b.packagesLayer(ctx, pkgs)
		if err != nil {
			return Result{}, err
		}
		layers = append(layers, l)
	}
	base, err := b.baseLayer(ctx, pkgs)
	if err != nil {
		return Result{}, err
	}
	binLayer, err := b.binaryLayer(im, bin)
	if err != nil {
		return Result{}, err
	}
	layers = append(layers, base, binLayer)
	var pkgList []string
	for _, p := range pkgs {
		pkgList = append(pkgList, p.Name+"="+p.Version)
	}
	cfg, err := b.config(ctx, im, pkgList)
	if err != nil {
		return Result{}, err
	}
	dir := filepath.Join(b.opts.Out, im.Name)
	key := digestOf(struct {
		V      int
		Layers []string
		Config v1.Config
	}{builderVersion, layerKeys(layers), cfg})
	if rec, err := readRecord(dir); err == nil && rec.Key == key {
		rec.Result.Reused = true
		return rec.Result, nil
	}
	img, unpacked, err := b.assemble(layers, cfg)
	if err != nil {
		return Result{}, err
	}
	digest, compressed, err := writeImageLayout(dir, img)
	if err != nil {
		return Result{}, err
	}
	r := Result{Name: im.Name, Layout: dir, Digest: digest.String(), CompressedBytes: compressed,
		UnpackedBytes: unpacked, Packages: pkgList}
	return r, writeRecord(dir, buildRecord{Key: key, Result: r})
}

func layerKeys(layers []cachedLayer) []string {
	var keys []string
	for _, l := range layers {
		keys = append(keys, filepath.Base(l.Path))
	}
	return keys
}

// config is the image's configuration: its user, entrypoint, environment and labels. Its
// creation time is the commit's, so that a rebuild of the same commit is the same image.
func (b *builder) config(ctx context.Context, im Image, pkgs []string) (v1.Config, error) {
	version := b.version
	if im.VersionOf != "" {
		var err error
		if version, err = b.moduleVersion(ctx, im); err != nil {
			return v1.Config{}, err
		}
	}
	labels := map[string]string{
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.revision":    b.git.Commit,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.created":     b.git.Time.Format("2006-01-02T15:04:05Z"),
		"org.opencontainers.image.title":       im.Name,
		"org.opencontainers.image.description": im.Description,
	}
	if len(pkgs) > 0 {
		labels[PackagesLabel] = strings.Join(pkgs, ",")
	}
	return v1.Config{
		User:       im.User,
		Entrypoint: []string{im.binaryPath()},
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		WorkingDir: "/",
		Labels:     labels,
	}, nil
}

// moduleVersion is the version im's module requires of im.VersionOf.
func (b *builder) moduleVersion(ctx context.Context, im Image) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", im.VersionOf)
	cmd.Dir = filepath.Join(b.opts.Repo, im.Module)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("the version of %s in %s: %v", im.VersionOf, cmd.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// assemble stacks the layers on an empty image with cfg and returns it and its unpacked size.
func (b *builder) assemble(layers []cachedLayer, cfg v1.Config) (v1.Image, int64, error) {
	var adds []mutate.Addendum
	var unpacked int64
	for _, l := range layers {
		layer, err := tarball.LayerFromFile(l.Path, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, 0, err
		}
		adds = append(adds, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: b.git.Time},
			CreatedBy: "vireo imagebuild: " + filepath.Base(l.Path)}})
		unpacked += l.UnpackedBytes
	}
	base := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	img, err := mutate.Append(base, adds...)
	if err != nil {
		return nil, 0, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, 0, err
	}
	cf = cf.DeepCopy()
	cf.Config = cfg
	cf.Created = v1.Time{Time: b.git.Time}
	cf.Architecture, cf.OS = runtime.GOARCH, "linux"
	img, err = mutate.ConfigFile(img, cf)
	return img, unpacked, err
}

// writeImageLayout writes img as the only image of a fresh OCI layout at dir (tagged latest)
// and returns its digest and compressed size.
func writeImageLayout(dir string, img v1.Image) (v1.Hash, int64, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, 0, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: "latest"})); err != nil {
		return v1.Hash{}, 0, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	layers, err := img.Layers()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	var compressed int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return v1.Hash{}, 0, err
		}
		compressed += n
	}
	return digest, compressed, nil
}

func readRecord(dir string) (buildRecord, error) {
	var rec buildRecord
	b, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, err
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return rec, err
	}
	return rec, nil
}

func writeRecord(dir string, rec buildRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "build.json"), append(b, '\n'), 0o644)
}

// cachedLayerAt returns the cached layer key names, building it with write when it is not
// there. write gets a temporary path and returns the unpacked size; the layer is renamed into
// place only when complete.
func (b *builder) cachedLayerAt(key string, write func(path string) (int64, error)) (cachedLayer, error) {
	path := filepath.Join(b.cache, "layers", key+".tar.gz")
	b.used[filepath.Base(path)] = true
	sizeFile := path + ".size"
	if sb, err := os.ReadFile(sizeFile); err == nil {
		var n int64
		if _, err := fmt.Sscan(string(sb), &n); err == nil {
			if _, err := os.Stat(path); err == nil {
				return cachedLayer{Path: path, UnpackedBytes: n}, nil
			}
		}
	}
	tmp := path + ".tmp"
	n, err := write(tmp)
	if err != nil {
		os.Remove(tmp)
		return cachedLayer{}, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return cachedLayer{}, err
	}
	if err := os.WriteFile(sizeFile, []byte(fmt.Sprintln(n)), 0o644); err != nil {
		return cachedLayer{}, err
	}
	return cachedLayer{Path: path, UnpackedBytes: n}, nil
}

// goBinary builds im's command, statically (no cgo) and reproducibly (-trimpath, the
// version's link-time values from git), and returns its path. Go's build cache makes a rebuild
// of unchanged sources quick.
func (b *builder) goBinary(ctx context.Context, im Image) (string, error) {
	out, err := filepath.Abs(filepath.Join(b.cache, "bin", im.Name)) // the build runs in im's module
	if err != nil {
		return "", err
	}
	const pkg = "github.com/vireo-dev/vireo/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitCommit=%s -X %s.gitTime=%s -X %s.gitTreeState=%s", pkg, b.git.Commit,
		pkg, b.git.Time.Format("2006-01-02T15:04:05Z"), pkg, b.git.TreeState)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, im.Command)
	cmd.Dir = filepath.Join(b.opts.Repo, im.Module)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", im.Command, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}

// binaryLayer is the layer with im's binary at /usr/bin/<name>.
func (b *builder) binaryLayer(im Image, bin string) (cachedLayer, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return cachedLayer{}, err
	}
	key := "bin-" + digestOf(struct {
		V    int
		Name string
		Sum  string
	}{builderVersion, im.binaryPath(), digestOf(data)})
	return b.cachedLayerAt(key, func(path string) (int64, error) {
		var files []layerFile
		parts := strings.Split(strings.TrimPrefix(im.binaryPath(), "/"), "/")
		for i := 1; i < len(parts); i++ {
			files = append(files, layerFile{Name: strings.Join(parts[:i], "/"), Mode: fs.ModeDir | 0o755})
		}
		files = append(files, layerFile{Name: strings.Join(parts, "/"), Mode: 0o755, Data: data})
		return writeLayer(path, layerEpoch, files, "")
	})
}

// Built returns what the last build under out made of each of Images (make oci), in order; an
// image never built is an error that says how to build it.
func Built(out string) ([]Result, error) {
	var results []Result
	for _, im := range Images {
		rec, err := readRecord(filepath.Join(out, im.Name))
		if err != nil {
			return nil, fmt.Errorf("image %s is not built under %s (%v): run `make oci`", im.Name, out, err)
		}
		results = append(results, rec.Result)
	}
	return results, nil
}

// pruneLayers deletes the cached layers no image of this build used (each commit's binaries
// make new ones; the layouts under Out hold copies of what they use) and returns how many
// bytes it freed.
func (b *builder) pruneLayers() (int64, error) {
	dir := filepath.Join(b.cache, "layers")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, e := range entries {
		if b.used[strings.TrimSuffix(e.Name(), ".size")] {
			continue
		}
		if info, err := e.Info(); err == nil {
			freed += info.Size()
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return freed, err
		}
	}
	return freed, nil
}
