package cmd

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/vireo-dev/vireo/internal/testsupport"
	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/images"
)

// TestMain lets this test binary act as vireo-local for the hidden commands the tests start
// as components (its first argument names the command); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "registry" {
		root := New(os.Stdout)
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRegistryComponent starts the registry as vireo-local up does (a supervised component
// running `vireo-local registry`), here on loopback, waits for its readiness, pulls the tiny
// guest's containerDisk by the name the installation gives it, and stops it as down does.
func TestRegistryComponent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the registry process and builds the guest images; skipped with -short")
	}
	out, err := images.RepoOutput()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := images.Build(ctx, images.Options{Out: out})
	if err != nil {
		t.Fatalf("building the guest images: %v", err)
	}

	opts := localcluster.DefaultOptions(io.Discard)
	opts.Root = t.TempDir()
	opts.BinDir = t.TempDir()
	opts.Images = out
	opts.Network.HostIP = net.IPv4(127, 0, 0, 1)
	opts.Ports.Registry = testsupport.FreePort(t)
	installAsVireoLocal(t, opts.BinDir)
	cluster := localcluster.New(opts)
	t.Cleanup(func() { _ = cluster.Down(false) })

	if err := cluster.Restart(ctx, localcluster.RegistryName); err != nil {
		t.Fatal(err)
	}
	st, err := cluster.ComponentStatus(localcluster.RegistryName)
	if err != nil || !st.Running || !st.Wanted {
		t.Fatalf("registry status %+v (%v), want running and wanted", st, err)
	}

	image := cluster.ContainerDiskImage(images.Tiny)
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling %s: %v", image, err)
	}
	if got, want := desc.Digest.String(), res.Manifest.ContainerDisk.Digest; got != want {
		t.Errorf("%s has digest %s, the built containerDisk %s", image, got, want)
	}

	if err := cluster.Down(false); err != nil {
		t.Fatal(err)
	}
	if st, err := cluster.ComponentStatus(localcluster.RegistryName); err != nil || st.Running || st.Wanted {
		t.Errorf("after down: registry status %+v (%v), want stopped", st, err)
	}
	if _, err := os.Stat(filepath.Join(opts.Root, "data", localcluster.RegistryName, "sha256")); err != nil {
		t.Errorf("no blobs under the installation's data directory: %v", err)
	}
}

// installAsVireoLocal copies this test binary to dir/vireo-local (a copy, not a link: the
// components are recognised by their executable's name).
func installAsVireoLocal(t *testing.T, dir string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst, err := os.OpenFile(filepath.Join(dir, "vireo-local"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, in); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
