package nodeagent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestLauncherDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand directories to uid 107")
	}
	d := nodeDirs{root: t.TempDir()}
	if err := d.ensureBase(); err != nil {
		t.Fatal(err)
	}
	uid := types.UID("6a0c1e2b-1111-4222-8333-944455556666")
	if err := d.ensureLauncherDir(uid); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(d.root, "pods", string(uid))
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != LauncherUser || fi.Mode().Perm() != 0o700 {
		t.Fatalf("launcher dir %v (%v), want a 0700 directory of uid 107", fi, err)
	}
	if err := d.ensureLauncherDir(uid); err != nil {
		t.Errorf("second ensure: %v", err)
	}
	for _, bad := range []types.UID{"../x", "", "a/b", ".."} {
		if err := d.ensureLauncherDir(bad); err == nil {
			t.Errorf("ensureLauncherDir(%q) accepted a path", bad)
		}
	}

	// A link where the launcher directory should be is refused, not followed.
	elsewhere := t.TempDir()
	linked := types.UID("7b1d2f3c-1111-4222-8333-944455556666")
	if err := os.Symlink(elsewhere, filepath.Join(d.root, "pods", string(linked))); err != nil {
		t.Fatal(err)
	}
	if err := d.ensureLauncherDir(linked); err == nil {
		t.Error("ensureLauncherDir followed a symlink")
	}
	if fi, _ := os.Stat(elsewhere); fi.Sys().(*syscall.Stat_t).Uid == LauncherUser {
		t.Error("the symlink's target was handed to uid 107")
	}

	// The command socket: a real one connects; a link planted at its name is refused.
	l, err := net.Listen("unix", filepath.Join(dir, "launcher.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := d.dialLauncher(uid)(ctx)
	if err != nil {
		t.Fatalf("dial the launcher's socket: %v", err)
	}
	conn.Close()
	other := types.UID("8c2e3a4d-1111-4222-8333-944455556666")
	if err := d.ensureLauncherDir(other); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "launcher.sock"), filepath.Join(d.root, "pods", string(other), "launcher.sock")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.dialLauncher(other)(ctx); err == nil {
		t.Error("dialLauncher followed a symlink planted at launcher.sock")
	}

	// Removal takes links away without touching their targets.
	keep := filepath.Join(elsewhere, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := d.removeLauncherDir(uid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("launcher dir still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("removal followed a link out of the launcher directory: %v", err)
	}
	uids, err := d.launcherDirs()
	if err != nil || len(uids) != 2 {
		t.Errorf("launcherDirs = %v, %v; want the two left", uids, err)
	}
}
