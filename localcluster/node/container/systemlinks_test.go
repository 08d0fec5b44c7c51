package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveSystemLinks(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the links must be root-owned")
	}
	dir := t.TempDir() // 0700, owned by root
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "run")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run", filepath.Join(dir, "varrun")); err != nil {
		t.Fatal(err)
	}
	got, err := resolveSystemLinks(filepath.Join(dir, "varrun", "secrets", "token"))
	if err != nil || got != filepath.Join(real, "secrets", "token") {
		t.Fatalf("root-owned link in a root-only directory: got %q, %v; want it resolved", got, err)
	}
	// A directory others may write: its links are not trusted and stay for createTarget to refuse.
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(open, "planted")); err != nil {
		t.Fatal(err)
	}
	got, err = resolveSystemLinks(filepath.Join(open, "planted", "x"))
	if err != nil || !strings.Contains(got, "planted") {
		t.Fatalf("link in a world-writable directory: got %q, %v; want it left in place", got, err)
	}
	if _, err := createTarget(got, true); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("createTarget through a planted link: %v, want a refusal", err)
	}
}
