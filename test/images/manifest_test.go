package images

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCacheKey(t *testing.T) {
	kernel := Package{Name: "linux-image-6.1.0-57-amd64", Version: "6.1.192-3", Arch: "amd64", SHA256: "aa"}
	bb := Package{Name: "busybox-static", Version: "1:1.35.0-4", Arch: "amd64", SHA256: "bb"}
	base := func() keyInputs {
		return keyInputs{BuilderVersion: 1, Packages: []Package{kernel, bb}, KernelCmdline: "console=ttyS0",
			Modules: []string{"virtio_net"}, GuestFiles: map[string]string{"guest/init": "11", "guest/profile": "22"}}
	}
	key := cacheKey(base())
	if key != cacheKey(base()) {
		t.Fatal("equal inputs give different keys")
	}
	swapped := base()
	swapped.Packages = []Package{bb, kernel}
	withDepends := base()
	withDepends.Packages[0].Depends = "something" // not an input: the name and version decide
	for name, in := range map[string]keyInputs{"packages in another order": swapped, "a Depends field": withDepends} {
		if cacheKey(in) != key {
			t.Errorf("%s changed the key", name)
		}
	}
	changes := map[string]func(*keyInputs){
		"builder version":    func(in *keyInputs) { in.BuilderVersion++ },
		"kernel version":     func(in *keyInputs) { in.Packages[0].Version = "6.1.193-1" },
		"a package's digest": func(in *keyInputs) { in.Packages[1].SHA256 = "cc" },
		"command line":       func(in *keyInputs) { in.KernelCmdline += " quiet" },
		"module list":        func(in *keyInputs) { in.Modules = append(in.Modules, "evdev") },
		"a guest file":       func(in *keyInputs) { in.GuestFiles["guest/init"] = "12" },
	}
	for name, change := range changes {
		in := base()
		change(&in)
		if cacheKey(in) == key {
			t.Errorf("changing the %s kept the key", name)
		}
	}
	if in := currentInputs(nil); len(in.GuestFiles) < 4 || in.GuestFiles["guest/init"] == "" {
		t.Errorf("the guest's files are not all inputs: %v", in.GuestFiles)
	}
}

func TestUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "disk.raw"), []byte("disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := hashFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(dir, Manifest{Key: "k1", Files: files}); err != nil {
		t.Fatal(err)
	}
	if _, ok := upToDate(dir, "k1"); !ok {
		t.Error("a complete build with the same key is not up to date")
	}
	if _, ok := upToDate(dir, "k2"); ok {
		t.Error("a build with another key is up to date")
	}
	if err := os.WriteFile(filepath.Join(dir, "disk.raw"), []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := upToDate(dir, "k1"); ok {
		t.Error("a build whose file changed size is up to date")
	}
	if _, ok := upToDate(t.TempDir(), "k1"); ok {
		t.Error("an empty directory is up to date")
	}
}
