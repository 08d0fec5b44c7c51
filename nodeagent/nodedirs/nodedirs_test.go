package nodedirs_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// TestLauncherDirs: the run directory gets the agent's own directory (root only, a link in its
// place refused); a Pod's directory is found only by a UID; the agent dials a launcher's
// socket in its emptyDir and never follows a link planted at the socket's name.
func TestLauncherDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own the agent's directory")
	}
	d := nodedirstest.New(t)
	if err := d.EnsureBase(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(d.Root, nodedirs.AgentDir))
	if err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != 0 || fi.Mode().Perm() != 0o700 {
		t.Fatalf("agent dir %v (%v), want a 0700 directory of root", fi, err)
	}
	if err := d.EnsureBase(); err != nil {
		t.Errorf("second ensure: %v", err)
	}

	// A link where the agent's directory should be is refused, not followed.
	elsewhere := t.TempDir()
	if err := os.Chmod(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	linkedRun := nodedirs.Dirs{Root: t.TempDir()}
	if err := os.Symlink(elsewhere, filepath.Join(linkedRun.Root, nodedirs.AgentDir)); err != nil {
		t.Fatal(err)
	}
	if err := linkedRun.EnsureBase(); err == nil {
		t.Error("EnsureBase followed a symlink at agent/")
	}
	if fi, _ := os.Stat(elsewhere); fi.Mode().Perm() != 0o755 {
		t.Errorf("the symlink's target changed mode to %v", fi.Mode().Perm())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, bad := range []types.UID{"../x", "", "a/b", "..", "."} {
		if fd, err := d.OpenEmptyDir(bad, 0); err == nil {
			syscall.Close(fd)
			t.Errorf("OpenEmptyDir(%q) accepted a path", bad)
		}
		if _, err := d.DialLauncher(bad)(ctx); err == nil {
			t.Errorf("DialLauncher(%q) accepted a path", bad)
		}
	}
	if _, err := (nodedirs.Dirs{Root: d.Root}).DialLauncher("p1")(ctx); err == nil {
		t.Error("dialed a launcher without the kubelet's Pod directories")
	}

	// The command socket: a real one connects; a link planted at its name is refused.
	uid := types.UID("p1")
	dir := nodedirstest.EmptyDir(t, d, uid)
	if _, err := d.DialLauncher(uid)(ctx); err == nil {
		t.Error("dialed a launcher that does not listen")
	}
	l, err := net.Listen("unix", filepath.Join(dir, protocol.CommandSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conn, err := d.DialLauncher(uid)(ctx)
	if err != nil {
		t.Fatalf("dial the launcher's socket: %v", err)
	}
	conn.Close()
	other := types.UID("p2")
	if err := os.Symlink(filepath.Join(dir, protocol.CommandSocket), filepath.Join(nodedirstest.EmptyDir(t, d, other), protocol.CommandSocket)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DialLauncher(other)(ctx); err == nil {
		t.Error("DialLauncher followed a symlink planted at launcher.sock")
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
	d := nodedirs.Dirs{Root: t.TempDir(), Pods: pods}
	capsFile := strings.Repeat("ab", 32) + ".xml"
	if err := os.WriteFile(filepath.Join(seed, capsFile), []byte("<qemuCaps/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid := types.UID("9d3f4b5e-1111-4222-8333-944455556666")
	if done, err := d.SeedLauncher(uid, seed); done || err != nil {
		t.Fatalf("seeding before the kubelet created the emptyDir: %t, %v", done, err)
	}
	dir := filepath.Join(pods, string(uid), "volumes", "kubernetes.io~empty-dir", "run")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if done, err := d.SeedLauncher(uid, seed); !done || err != nil {
		t.Fatalf("seeding: %t, %v", done, err)
	}
	copied := filepath.Join(dir, "capabilities", capsFile)
	fi, err := os.Lstat(copied)
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(launcherpodapi.LauncherUser) {
		t.Errorf("the seed's copy %v (%v), want a file of uid 107", fi, err)
	}
	if done, err := d.SeedLauncher(uid, seed); !done || err != nil {
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
	conn, err := d.DialLauncher(uid)(ctx)
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
	_, _ = d.SeedLauncher(planted, seed)
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
	if done, err := d.SeedLauncher(linked, seed); done || err == nil {
		t.Errorf("seeding through a link in place of the emptyDir: %t, %v", done, err)
	}
	if _, err := d.DialLauncher(linked)(ctx); err == nil {
		t.Error("dialing through a link in place of the emptyDir succeeded")
	}
}

// TestDeadlines: the agent lists the shutdown deadlines in its directory and nothing else
// there; a cleared deadline is gone.
func TestDeadlines(t *testing.T) {
	live, gone := types.UID("6a0c1e2b-1111-4222-8333-944455556666"), types.UID("7b1d2f3c-1111-4222-8333-944455556666")
	d, at := nodedirstest.WithDeadlines(t, live, gone)
	for _, stray := range []string{"notes", "Not_A_UID.deadline", string(gone) + ".deadline.tmp"} {
		if err := os.WriteFile(filepath.Join(d.Root, nodedirs.AgentDir, stray), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(d.Root, nodedirs.AgentDir, "dir.deadline"), 0o700); err != nil {
		t.Fatal(err)
	}
	uids, err := d.Deadlines()
	slices.Sort(uids)
	if err != nil || !slices.Equal(uids, []types.UID{live, gone}) {
		t.Fatalf("deadlines = %v, %v; want %v and %v", uids, err, live, gone)
	}
	if got, ok := d.Deadline(live); !ok || !got.Equal(at) {
		t.Errorf("deadline: %v %t, want %v", got, ok, at)
	}
	d.ClearDeadline(gone)
	if _, ok := d.Deadline(gone); ok {
		t.Error("a cleared deadline survived")
	}
	if err := d.SetDeadline("../x", at); err == nil {
		t.Error("SetDeadline took a path for a UID")
	}
}
