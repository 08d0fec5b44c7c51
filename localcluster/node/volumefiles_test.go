package node

import (
	"os"
	"path/filepath"
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
