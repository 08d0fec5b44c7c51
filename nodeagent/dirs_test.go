package nodeagent

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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// testNodeDirs is a run directory and kubelet Pod directories below one short temporary root:
// t.TempDir's paths are too long for a socket address (108 bytes) in an emptyDir.
func testNodeDirs(t *testing.T) nodeDirs {
	t.Helper()
	base, err := os.MkdirTemp("", "na")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	d := nodeDirs{root: filepath.Join(base, "r"), pods: filepath.Join(base, "k")}
	if err := os.Mkdir(d.pods, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// testEmptyDir creates Pod uid's emptyDir "run" below the kubelet's Pod directories, as the
// kubelet does, and returns its path.
func testEmptyDir(t *testing.T, d nodeDirs, uid types.UID) string {
	t.Helper()
	dir := filepath.Join(d.pods, protocol.EmptyDirPath(string(uid), launcherpodapi.RunDirVolumeName))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLauncherDirs: the run directory gets the agent's own directory (root only, a link in its
// place refused); a Pod's directory is found only by a UID; the agent dials a launcher's
// socket in its emptyDir and never follows a link planted at the socket's name.
func TestLauncherDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own the agent's directory")
	}
	d := testNodeDirs(t)
	if err := d.ensureBase(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(d.root, agentDir))
	if err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != 0 || fi.Mode().Perm() != 0o700 {
		t.Fatalf("agent dir %v (%v), want a 0700 directory of root", fi, err)
	}
	if err := d.ensureBase(); err != nil {
		t.Errorf("second ensure: %v", err)
	}

	// A link where the agent's directory should be is refused, not followed.
	elsewhere := t.TempDir()
	if err := os.Chmod(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	linkedRun := nodeDirs{root: t.TempDir()}
	if err := os.Symlink(elsewhere, filepath.Join(linkedRun.root, agentDir)); err != nil {
		t.Fatal(err)
	}
	if err := linkedRun.ensureBase(); err == nil {
		t.Error("ensureBase followed a symlink at agent/")
	}
	if fi, _ := os.Stat(elsewhere); fi.Mode().Perm() != 0o755 {
		t.Errorf("the symlink's target changed mode to %v", fi.Mode().Perm())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, bad := range []types.UID{"../x", "", "a/b", "..", "."} {
		if fd, err := d.openEmptyDir(bad, 0); err == nil {
			syscall.Close(fd)
			t.Errorf("openEmptyDir(%q) accepted a path", bad)
		}
		if _, err := d.dialLauncher(bad)(ctx); err == nil {
			t.Errorf("dialLauncher(%q) accepted a path", bad)
		}
	}
	if _, err := (nodeDirs{root: d.root}).dialLauncher("p1")(ctx); err == nil {
		t.Error("dialed a launcher without the kubelet's Pod directories")
	}

	// The command socket: a real one connects; a link planted at its name is refused.
	uid := types.UID("p1")
	dir := testEmptyDir(t, d, uid)
	if _, err := d.dialLauncher(uid)(ctx); err == nil {
		t.Error("dialed a launcher that does not listen")
	}
	l, err := net.Listen("unix", filepath.Join(dir, protocol.CommandSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conn, err := d.dialLauncher(uid)(ctx)
	if err != nil {
		t.Fatalf("dial the launcher's socket: %v", err)
	}
	conn.Close()
	other := types.UID("p2")
	if err := os.Symlink(filepath.Join(dir, protocol.CommandSocket), filepath.Join(testEmptyDir(t, d, other), protocol.CommandSocket)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.dialLauncher(other)(ctx); err == nil {
		t.Error("dialLauncher followed a symlink planted at launcher.sock")
	}
}

// TestCollectGarbage: the agent lists the shutdown deadlines in its directory, nothing else
// there, and on start forgets the Pods that have one but are gone, keeping the live Pods'.
func TestCollectGarbage(t *testing.T) {
	d := nodeDirs{root: t.TempDir()}
	if err := os.Mkdir(filepath.Join(d.root, agentDir), 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Minute).Truncate(time.Second)
	live, gone := types.UID("6a0c1e2b-1111-4222-8333-944455556666"), types.UID("7b1d2f3c-1111-4222-8333-944455556666")
	for _, uid := range []types.UID{live, gone} {
		if err := d.setDeadline(uid, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, stray := range []string{"notes", "Not_A_UID.deadline", string(gone) + ".deadline.tmp"} {
		if err := os.WriteFile(filepath.Join(d.root, agentDir, stray), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(d.root, agentDir, "dir.deadline"), 0o700); err != nil {
		t.Fatal(err)
	}
	uids, err := d.deadlines()
	slices.Sort(uids)
	if err != nil || !slices.Equal(uids, []types.UID{live, gone}) {
		t.Fatalf("deadlines = %v, %v; want %v and %v", uids, err, live, gone)
	}

	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm1", UID: live}})
	a := &Agent{dirs: d, pods: corelisters.NewPodLister(idx)}
	a.collectGarbage(context.Background())
	if got, ok := d.deadline(live); !ok || !got.Equal(at) {
		t.Errorf("the live Pod's deadline: %v %t, want %v", got, ok, at)
	}
	if _, ok := d.deadline(gone); ok {
		t.Error("the deadline of a Pod that is gone survived")
	}
	if uids, err := d.deadlines(); err != nil || !slices.Equal(uids, []types.UID{live}) {
		t.Errorf("deadlines after garbage collection = %v, %v; want %v", uids, err, live)
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
