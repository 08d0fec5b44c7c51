package embeddedetcd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsurePrivateDirCreatesAPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sockets")
	if err := ensurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("created %v, want a directory of mode 0700", fi.Mode())
	}
	// A second start (the same user's own directory) accepts it.
	if err := ensurePrivateDir(dir); err != nil {
		t.Errorf("own private directory refused: %v", err)
	}
}

func TestEnsurePrivateDirRefusesOthers(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    string
	}{
		{"readable by others", func(t *testing.T, dir string) { mkdir(t, dir, 0o755) }, "has mode 0755, want 0700"},
		{"group-writable", func(t *testing.T, dir string) { mkdir(t, dir, 0o770) }, "has mode 0770, want 0700"},
		{"a symbolic link to a private directory", func(t *testing.T, dir string) {
			target := filepath.Join(filepath.Dir(dir), "elsewhere")
			mkdir(t, target, 0o700)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"a dangling symbolic link", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(dir), "missing"), dir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"a file", func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
		{"owned by another user", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			mkdir(t, dir, 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "is owned by uid 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sockets")
			c.prepare(t, dir)
			err := ensurePrivateDir(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "remove "+dir) {
				t.Errorf("got %v, want an error saying %q and what to do", err, c.want)
			}
		})
	}
}

func mkdir(t *testing.T, dir string, perm os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil { // not narrowed by the umask
		t.Fatal(err)
	}
}
