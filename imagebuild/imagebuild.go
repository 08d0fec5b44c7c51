// Package imagebuild builds Vireo's OCI images without a Docker engine, BuildKit or any daemon:
// Go binaries built here, Debian packages fetched with the host's apt and unpacked (never
// installed on the host), layers written reproducibly and assembled with go-containerregistry
// into OCI layouts under one directory (make oci: _output/oci/<image>). Building twice from
// the same commit and package versions gives the same digests; a layer whose inputs did not
// change is reused, not written again.
package imagebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vireo-dev/vireo/imagebuild/debian"
	"github.com/vireo-dev/vireo/version"
)

// builderVersion changes whenever the builder would write different bytes for the same inputs,
// so that no cached layer from an older builder is reused.
const builderVersion = 2

// Source is the repository the images are built from (their org.opencontainers.image.source).
const Source = "https://github.com/vireo-dev/vireo"

// Options configure Build.
type Options struct {
	// Repo is the repository's root (where go.mod is).
	Repo string
	// Out is where the OCI layouts go: Out/<image>/ (and Out/.cache/ for reused layers).
	Out string
	// Images names the images to build; all of Images when empty.
	Images []string
	// Log receives progress lines; nothing when nil.
	Log io.Writer
}

// Result is what Build made of one image.
type Result struct {
	Name string `json:"name"`
	// Layout is the OCI layout's directory.
	Layout string `json:"layout"`
	// Digest is the image manifest's digest.
	Digest string `json:"digest"`
	// CompressedBytes is the size of its layers as pulled; UnpackedBytes as unpacked.
	CompressedBytes int64 `json:"compressedBytes"`
	UnpackedBytes   int64 `json:"unpackedBytes"`
	// Packages are the Debian packages in it (name=version).
	Packages []string `json:"packages,omitempty"`
	// Reused reports that nothing changed since the last build.
	Reused bool `json:"reused"`
}

// gitState is the commit the images are built from.
type gitState struct {
	Commit    string
	Time      time.Time
	TreeState string // clean or dirty
}

func readGitState(ctx context.Context, repo string) (gitState, error) {
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s in %s: %w (the images are built from a git checkout)", strings.Join(args, " "), repo, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	commit, err := run("rev-parse", "HEAD")
	if err != nil {
		return gitState{}, err
	}
	when, err := run("log", "-1", "--format=%cI")
	if err != nil {
		return gitState{}, err
	}
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return gitState{}, fmt.Errorf("commit time %q: %w", when, err)
	}
	status, err := run("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return gitState{}, err
	}
	state := "clean"
	if status != "" {
		state = "dirty"
	}
	return gitState{Commit: commit, Time: t.UTC(), TreeState: state}, nil
}

// Build builds the images opts names and returns what it made of each, in order.
func Build(ctx context.Context, opts Options) ([]Result, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	images, err := selectImages(opts.Images)
	if err != nil {
		return nil, err
	}
	git, err := readGitState(ctx, opts.Repo)
	if err != nil {
		return nil, err
	}
	b := &builder{opts: opts, git: git, version: version.ForCommit(git.Commit, git.Time, git.TreeState).GitVersion,
		cache: filepath.Join(opts.Out, ".cache"), used: map[string]bool{}}
	for _, dir := range []string{b.cache, filepath.Join(b.cache, "layers"), filepath.Join(b.cache, "debs"), filepath.Join(b.cache, "bin")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	var results []Result
	for _, im := range images {
		start := time.Now()
		r, err := b.image(ctx, im)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", im.Name, err)
		}
		what := "built"
		if r.Reused {
			what = "unchanged"
		}
		fmt.Fprintf(opts.Log, "%-17s %s in %.1fs: %s, %s compressed, %s unpacked\n", im.Name, what,
			time.Since(start).Seconds(), r.Digest, megabytes(r.CompressedBytes), megabytes(r.UnpackedBytes))
		results = append(results, r)
	}
	if len(opts.Images) == 0 { // a build of some images keeps what the others use
		freed, err := b.pruneLayers()
		if err != nil {
			return nil, fmt.Errorf("pruning the layer cache: %w", err)
		}
		if freed > 0 {
			fmt.Fprintf(opts.Log, "layer cache: %s of layers no image uses any more deleted\n", megabytes(freed))
		}
	}
	return results, nil
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func selectImages(names []string) ([]Image, error) {
	if len(names) == 0 {
		return Images, nil
	}
	var out []Image
	for _, n := range names {
		im, ok := ImageNamed(n)
		if !ok {
			var known []string
			for _, k := range Images {
				known = append(known, k.Name)
			}
			return nil, fmt.Errorf("no image %q; the images are %s", n, strings.Join(known, ", "))
		}
		out = append(out, im)
	}
	return out, nil
}

// builder holds what one Build shares between images.
type builder struct {
	opts    Options
	git     gitState
	version string
	cache   string
	// resolved caches Debian closures by their package list.
	resolved map[string][]debian.Package
	// used names the cached layers (file names) this build's images are made of.
	used map[string]bool
}

// digestOf is the hex SHA-256 of v's JSON form: the cache key of a layer's inputs.
func digestOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain data is digested
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
