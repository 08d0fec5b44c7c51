package disks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mkfile writes a file below dir, creating its parents.
func mkfile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenBeneath(t *testing.T) {
	root := t.TempDir()
	outside := mkfile(t, t.TempDir(), "secret", "node secret")
	mkfile(t, root, "disk/image.qcow2", "image")
	if err := os.Symlink(outside, filepath.Join(root, "disk", "link.qcow2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "disk"), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "disk", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := openBeneath(root, "disk/image.qcow2")
	if err != nil {
		t.Fatalf("a plain file below the root: %v", err)
	}
	f.Close()
	f, err = openBeneath(root, "/disk//./image.qcow2")
	if err != nil {
		t.Fatalf("a plain file with a redundant path: %v", err)
	}
	f.Close()
	for rel, want := range map[string]string{
		"disk/link.qcow2":     "is a symlink",
		"linkdir/image.qcow2": "symlink",
		"disk/../disk/image":  `may not contain ".."`,
		"disk":                "not a regular file",
		"disk/fifo":           "not a regular file",
		"disk/missing":        "no such file",
		"":                    "no file named",
	} {
		f, err := openBeneath(root, rel)
		if err == nil {
			f.Close()
			t.Errorf("openBeneath(%q) succeeded", rel)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("openBeneath(%q): %v, want %q", rel, err, want)
		}
	}
}

func TestDirHandleRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(dir, "empty-disks")); err != nil {
		t.Fatal(err)
	}
	p := &Preparer{Dir: dir}
	if d, err := p.subdir("empty-disks"); err == nil {
		d.Close()
		t.Error("a symlink was taken for a subdirectory")
	}
	d, err := p.subdir("cloud-init")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Symlink(filepath.Join(target, "planted"), filepath.Join(d.path, "x.iso.tmp")); err != nil {
		t.Fatal(err)
	}
	if f, err := d.createExclusive("x.iso.tmp"); err == nil {
		f.Close()
		t.Error("createExclusive wrote through a symlink")
	}
	if _, err := os.Stat(filepath.Join(target, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file appeared at the symlink's target: %v", err)
	}
	if _, err := d.existingFile("x.iso.tmp"); err == nil {
		t.Error("existingFile accepted a symlink")
	}
	if ok, err := d.existingFile("missing"); ok || err != nil {
		t.Errorf("existingFile(missing) = %v, %v", ok, err)
	}
}

func TestCheckVolumeName(t *testing.T) {
	for _, ok := range []string{"rootdisk", "cloudinit-1", "a"} {
		if err := checkVolumeName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../etc", "a/b", "Root", "a.b", ".hidden", strings.Repeat("a", 64)} {
		if err := checkVolumeName(bad); err == nil {
			t.Errorf("%q was accepted as a file name", bad)
		}
	}
}

func TestCheckStandalone(t *testing.T) {
	ok := []imageInfo{{Format: "raw"}, {Format: "qcow2"}}
	for _, info := range ok {
		if err := checkStandalone(&info, "img"); err != nil {
			t.Errorf("%+v: %v", info, err)
		}
	}
	withDataFile := imageInfo{Format: "qcow2"}
	withDataFile.FormatSpecific.Data.DataFile = "/etc/shadow"
	for _, c := range []struct {
		info imageInfo
		want string
	}{
		{imageInfo{Format: "vmdk"}, "raw and qcow2 images only"},
		{imageInfo{Format: "qcow2", BackingFilename: "/etc/shadow"}, "backing file"},
		{withDataFile, "external data file"},
	} {
		err := checkStandalone(&c.info, "img")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.info, err, c.want)
		}
	}
}

func TestSupportsDirectIO(t *testing.T) {
	if SupportsDirectIO(filepath.Join(t.TempDir(), "missing")) {
		t.Error("a missing file supports direct I/O")
	}
	dir := t.TempDir()
	p := mkfile(t, dir, "f", "x")
	if err := os.Symlink(p, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if SupportsDirectIO(filepath.Join(dir, "l")) {
		t.Error("SupportsDirectIO followed a symlink")
	}
}
