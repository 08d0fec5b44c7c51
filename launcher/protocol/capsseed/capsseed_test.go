package capsseed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const name1 = "926803a9278e445ec919c2b6cbd8c1c449c75b26dcb1686b774314180376c725.xml"

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCopyTakesOnlyCacheFiles(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "seed")
	write(t, filepath.Join(src, name1), "<qemuCaps/>")
	write(t, filepath.Join(src, "notes.txt"), "not a cache file")
	write(t, filepath.Join(src, strings.ToUpper(name1[:64])+".xml"), "upper-case hex is not libvirt's")
	n, err := Copy(src, dst, 0o644, nil)
	if err != nil || n != 1 {
		t.Fatalf("Copy = %d, %v; want 1, nil", n, err)
	}
	got, err := os.ReadFile(filepath.Join(dst, name1))
	if err != nil || string(got) != "<qemuCaps/>" {
		t.Fatalf("copied file = %q, %v", got, err)
	}
	fi, err := os.Stat(filepath.Join(dst, name1))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("copied file mode = %v, %v; want 0644", fi.Mode(), err)
	}
	if di, err := os.Stat(dst); err != nil || di.Mode().Perm() != 0o755 {
		t.Fatalf("seed directory mode = %v, %v; want 0755 for a world-readable seed", di.Mode(), err)
	}
	entries, _ := os.ReadDir(dst)
	if len(entries) != 1 {
		t.Fatalf("seed holds %d entries, want only the cache file (no temporary files): %v", len(entries), entries)
	}
}

func TestCopyWithoutSourceIsNoSeed(t *testing.T) {
	n, err := Copy(filepath.Join(t.TempDir(), "missing"), filepath.Join(t.TempDir(), "seed"), 0o644, nil)
	if err != nil || n != 0 {
		t.Fatalf("Copy = %d, %v; want 0, nil", n, err)
	}
}

func TestCopyRefusesLinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "host file")
	src := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(src, name1)); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "seed")
	if _, err := Copy(src, dst, 0o644, nil); err == nil || !strings.Contains(err.Error(), name1) {
		t.Fatalf("Copy of a symlinked cache file: err = %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dst, name1)); !os.IsNotExist(err) {
		t.Fatalf("the link's target was copied: %v", err)
	}

	// A linked source directory is refused too.
	linkedDir := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(t.TempDir(), linkedDir); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(linkedDir, dst, 0o644, nil); err == nil {
		t.Fatal("Copy from a symlinked source directory succeeded")
	}
	// And a destination that is a link.
	linkedDst := filepath.Join(t.TempDir(), "dst")
	if err := os.Symlink(t.TempDir(), linkedDst); err != nil {
		t.Fatal(err)
	}
	src2 := t.TempDir()
	write(t, filepath.Join(src2, name1), "<qemuCaps/>")
	if _, err := Copy(src2, linkedDst, 0o644, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Copy into a symlinked destination: err = %v, want 'not a directory'", err)
	}
}

func TestCopyRefusesOversizeAndSpecialFiles(t *testing.T) {
	src := t.TempDir()
	f, err := os.Create(filepath.Join(src, name1))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if _, err := Copy(src, filepath.Join(t.TempDir(), "seed"), 0o644, nil); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("Copy of an oversize file: err = %v", err)
	}
	src2 := t.TempDir()
	if err := os.Mkdir(filepath.Join(src2, name1), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(src2, filepath.Join(t.TempDir(), "seed"), 0o644, nil); err == nil {
		t.Fatal("Copy of a directory named like a cache file succeeded")
	}
}
