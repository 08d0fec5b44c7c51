package nodeagent

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	if err := d.ensurePodDir(uid); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(d.root, "pods", string(uid))
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != LauncherUser || fi.Mode().Perm() != 0o700 {
		t.Fatalf("launcher dir %v (%v), want a 0700 directory of uid 107", fi, err)
	}
	if err := d.ensurePodDir(uid); err != nil {
		t.Errorf("second ensure: %v", err)
	}
	for _, bad := range []types.UID{"../x", "", "a/b", ".."} {
		if err := d.ensurePodDir(bad); err == nil {
			t.Errorf("ensurePodDir(%q) accepted a path", bad)
		}
	}

	// A link where the launcher directory should be is refused, not followed.
	elsewhere := t.TempDir()
	linked := types.UID("7b1d2f3c-1111-4222-8333-944455556666")
	if err := os.Symlink(elsewhere, filepath.Join(d.root, "pods", string(linked))); err != nil {
		t.Fatal(err)
	}
	if err := d.ensurePodDir(linked); err == nil {
		t.Error("ensurePodDir followed a symlink")
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
	if err := d.ensurePodDir(other); err != nil {
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
	if err := d.removePodDir(uid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("launcher dir still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("removal followed a link out of the launcher directory: %v", err)
	}
	uids, err := d.podDirs()
	if err != nil || len(uids) != 2 {
		t.Errorf("launcherDirs = %v, %v; want the two left", uids, err)
	}
}

// TestLauncherEmptyDir: a launcher Pod's directory is its emptyDir below the kubelet's Pod
// directories: the agent dials its socket there; it copies the node's capabilities seed in
// only once the kubelet created the emptyDir, whole, for uid 107; a link in place of the
// emptyDir, of the seed's name or of a socket is never followed.
func TestLauncherEmptyDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand files to uid 107")
	}
	pods, seed := t.TempDir(), t.TempDir()
	d := nodeDirs{root: t.TempDir(), pods: pods}
	capsFile := strings.Repeat("ab", 32) + ".xml"
	if err := os.WriteFile(filepath.Join(seed, capsFile), []byte("<qemuCaps/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid := types.UID("9d3f4b5e-1111-4222-8333-944455556666")
	if done, err := d.seedLauncher(uid, seed); done || err != nil {
		t.Fatalf("seeding before the kubelet created the emptyDir: %t, %v", done, err)
	}
	dir := filepath.Join(pods, string(uid), "volumes", "kubernetes.io~empty-dir", "run")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if done, err := d.seedLauncher(uid, seed); !done || err != nil {
		t.Fatalf("seeding: %t, %v", done, err)
	}
	copied := filepath.Join(dir, "capabilities", capsFile)
	fi, err := os.Lstat(copied)
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != LauncherUser {
		t.Errorf("the seed's copy %v (%v), want a file of uid 107", fi, err)
	}
	if done, err := d.seedLauncher(uid, seed); !done || err != nil {
		t.Errorf("seeding again: %t, %v", done, err)
	}

	// The kubelet's paths are longer than a socket address may be: bound through a descriptor.
	dirFile, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dirFile.Close()
	l, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/launcher.sock", dirFile.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := d.dialLauncher(uid)(ctx)
	if err != nil {
		t.Fatalf("dial the launcher's socket in its emptyDir: %v", err)
	}
	conn.Close()

	// A launcher that planted a link at the seed's name gets no seed, and the link's target
	// is untouched; a link in place of the emptyDir is not followed either.
	elsewhere := t.TempDir()
	planted := types.UID("ae405c6f-1111-4222-8333-944455556666")
	pdir := filepath.Join(pods, string(planted), "volumes", "kubernetes.io~empty-dir", "run")
	if err := os.MkdirAll(pdir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(pdir, "capabilities")); err != nil {
		t.Fatal(err)
	}
	_, _ = d.seedLauncher(planted, seed)
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the seed was written through a planted link: %v", entries)
	}
	linked := types.UID("bf516d70-1111-4222-8333-944455556666")
	if err := os.MkdirAll(filepath.Join(pods, string(linked), "volumes", "kubernetes.io~empty-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(pods, string(linked), "volumes", "kubernetes.io~empty-dir", "run")); err != nil {
		t.Fatal(err)
	}
	if done, err := d.seedLauncher(linked, seed); done || err == nil {
		t.Errorf("seeding through a link in place of the emptyDir: %t, %v", done, err)
	}
	if _, err := d.dialLauncher(linked)(ctx); err == nil {
		t.Error("dialing through a link in place of the emptyDir succeeded")
	}
}
