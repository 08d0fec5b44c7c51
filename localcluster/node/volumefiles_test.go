package node

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteFilesReplacesAndRemovesStaleKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	if err := writeFiles(dir, map[string][]byte{"a": []byte("1"), "sub/b": []byte("2")}, 0o640, -1); err != nil {
		t.Fatal(err)
	}
	if err := writeFiles(dir, map[string][]byte{"./a": []byte("3")}, 0o640, -1); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(b) != "3" {
		t.Errorf("a = %q, %v; want the new content", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a's mode: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "b")); !os.IsNotExist(err) {
		t.Errorf("the file of a removed key is still there (%v)", err)
	}
	for _, bad := range []string{"../escape", "/abs", "."} {
		if err := writeFiles(dir, map[string][]byte{bad: []byte("x")}, 0o644, -1); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
}

func TestSetVolumeOwnershipLeavesLinksAlone(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "disk.img"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := setVolumeOwnership(dir, 107); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o770 | os.ModeSetgid | os.ModeDir, filepath.Join(dir, "sub"): 0o770 | os.ModeSetgid | os.ModeDir,
		filepath.Join(dir, "sub", "disk.img"): 0o660, secret: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
		gid := fi.Sys().(*syscall.Stat_t).Gid
		if wantGID := map[bool]uint32{true: 0, false: 107}[path == secret]; os.Geteuid() == 0 && gid != wantGID {
			t.Errorf("%s: group %d, want %d", path, gid, wantGID)
		}
	}
}
