package node

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMakeSubPath(t *testing.T) {
	root := t.TempDir()
	if err := os.Chmod(root, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := makeSubPath(root, "pods/abc"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "pods", "abc"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Fatalf("the subPath directory: %v %v, want a directory with the volume's mode 0750", fi, err)
	}
	if err := makeSubPath(root, "pods/abc"); err != nil {
		t.Errorf("an existing subPath: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "key"), []byte("v"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := makeSubPath(root, "key"); err != nil {
		t.Errorf("a file as the subPath: %v", err)
	}
	if err := makeSubPath(root, "key/below"); err == nil {
		t.Error("a subPath below a file was accepted")
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := makeSubPath(root, "link/escape"); err == nil {
		t.Error("a subPath through a planted symbolic link was followed")
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); err == nil {
		t.Error("a directory was created through the symbolic link")
	}
}
