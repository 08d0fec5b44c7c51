package localcluster

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRegistryAddress(t *testing.T) {
	def := New(DefaultOptions(io.Discard))
	if got, want := def.RegistryAddress(), "10.250.0.1:5000"; got != want {
		t.Errorf("default installation: registry at %s, want %s", got, want)
	}
	if got, want := def.ContainerDiskImage("tiny"), "10.250.0.1:5000/vireo/tiny-containerdisk:latest"; got != want {
		t.Errorf("tiny containerDisk %s, want %s", got, want)
	}
	// As test/e2e makes its installation: its own network, Ports without a registry port.
	e2e := DefaultOptions(io.Discard)
	e2e.Network = Network{Netns: "vireo-e2e", HostIP: net.IPv4(10, 251, 0, 1), PrefixLen: 24, ClusterCIDR: "10.245.0.0/16"}
	e2e.Ports = Ports{EtcdClient: 12379, EtcdPeer: 12380, KubeAPIServer: 16443, ControllerManager: 20257, Scheduler: 20259}
	if got, want := New(e2e).RegistryAddress(), "10.251.0.1:5000"; got != want {
		t.Errorf("e2e installation: registry at %s, want %s", got, want)
	}
	for _, c := range []struct {
		ports Ports
		want  int
	}{
		{Ports{Registry: 5999}, 5999},
		{Ports{KubeAPIServer: 5000}, 5001},
		{Ports{EtcdClient: 5000, EtcdPeer: 5001}, 5002},
	} {
		if got := c.ports.RegistryPort(); got != c.want {
			t.Errorf("%+v: registry port %d, want %d", c.ports, got, c.want)
		}
	}
}

func TestImagesDir(t *testing.T) {
	if got, want := (Layout{BinDir: "_output/bin"}).ImagesDir(), "_output/images"; got != want {
		t.Errorf("ImagesDir = %s, want %s", got, want)
	}
	if got, want := (Layout{BinDir: "/repo/_output/bin/"}).ImagesDir(), "/repo/_output/images"; got != want {
		t.Errorf("ImagesDir = %s, want %s", got, want)
	}
	if got, want := (Layout{BinDir: "_output/bin", Images: "/imgs"}).ImagesDir(), "/imgs"; got != want {
		t.Errorf("ImagesDir = %s, want %s", got, want)
	}
}

func TestRecordedRegistry(t *testing.T) {
	opts := DefaultOptions(io.Discard)
	opts.Root = t.TempDir()
	opts.Images = "/some/images"
	opts.Ports.Registry = 0
	c := New(opts)
	if err := c.recordOptions(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(opts.Root, "run", "installation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Registry string `json:"registry"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Registry != "10.250.0.1:5000" {
		t.Errorf("installation.json: registry %q (%v), want 10.250.0.1:5000:\n%s", rec.Registry, err, b)
	}
	loaded, err := LoadRecordedOptions(Options{Layout: Layout{Root: opts.Root, BinDir: "elsewhere/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Images != "/some/images" || loaded.Ports.Registry != DefaultRegistryPort {
		t.Errorf("loaded images %q, registry port %d", loaded.Images, loaded.Ports.Registry)
	}
	comp, err := New(loaded).Component(RegistryName)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]string{{"--address", "10.250.0.1:5000"}, {"--images", "/some/images"}} {
		i := slices.Index(comp.Args, want[0])
		if i < 0 || i+1 >= len(comp.Args) || comp.Args[i+1] != want[1] {
			t.Errorf("registry args %v: want %s %s", comp.Args, want[0], want[1])
		}
	}
}
