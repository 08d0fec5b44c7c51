package imagebuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// repoRoot is the repository's root, two levels up from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func skipWithoutApt(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds an image (go build, apt): not in -short")
	}
	for _, tool := range []string{"apt-get", "dpkg-deb", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (Debian)", tool)
		}
	}
}

// TestBuildIsReproducible builds the pause image twice, each time from nothing (no cache, no
// layout), and expects the same digest: same commit, same packages, same bytes.
func TestBuildIsReproducible(t *testing.T) {
	skipWithoutApt(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var digests []string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "oci")
		results, err := Build(ctx, Options{Repo: repoRoot(t), Out: out, Images: []string{"pause"}})
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		digests = append(digests, results[0].Digest)
		if i == 0 {
			checkPauseImage(t, results[0])
			again, err := Build(ctx, Options{Repo: repoRoot(t), Out: out, Images: []string{"pause"}})
			if err != nil {
				t.Fatal(err)
			}
			if !again[0].Reused || again[0].Digest != results[0].Digest {
				t.Errorf("a second build with nothing changed: reused %v, digest %s (first %s); want it reused",
					again[0].Reused, again[0].Digest, results[0].Digest)
			}
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same commit gave %s and %s", digests[0], digests[1])
	}
}

// checkPauseImage reads the built image back from its layout: non-root user, the OCI labels,
// the entrypoint, and a layer with the binary.
func checkPauseImage(t *testing.T, r Result) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(r.Layout)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v1.NewHash(r.Digest)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(h)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if u := cf.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root") {
		t.Errorf("user %q: images run as a non-root user", u)
	}
	for _, l := range []string{"source", "revision", "version", "created"} {
		if cf.Config.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("label org.opencontainers.image.%s is missing: %v", l, cf.Config.Labels)
		}
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/bin/pause" {
		t.Errorf("entrypoint %q", got)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if _, err := os.Stat(filepath.Join(r.Layout, "index.json")); err != nil {
		t.Error(err)
	}
}

// TestPruneLayers: a cached layer this build used stays, with its size file; one no image
// used any more goes, with its size file.
func TestPruneLayers(t *testing.T) {
	b := &builder{cache: t.TempDir()}
	dir := filepath.Join(b.cache, "layers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kept.tar.gz", "kept.tar.gz.size", "stale.tar.gz", "stale.tar.gz.size"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.used = map[string]bool{"kept.tar.gz": true}
	freed, err := b.pruneLayers()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "kept.tar.gz kept.tar.gz.size" || freed != 10 {
		t.Errorf("after pruning: %v, %d bytes freed; want only kept.tar.gz and its size, 10 bytes", left, freed)
	}
}
