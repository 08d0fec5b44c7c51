package container

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/test/logcapture"
)

func TestRunAsUser(t *testing.T) {
	uid, gid := int64(65534), int64(65533)
	spec := sh("id -u; id -g; id -G")
	spec.UID, spec.GID, spec.SupplementalGroups = &uid, &gid, []int64{1234}
	dir, _ := run(t, spec)
	if e := waitExit(t, dir); e.Code != 0 {
		t.Fatalf("exit = %+v: %s", e, logOf(t, dir, LogOptions{}))
	}
	if got := logOf(t, dir, LogOptions{}); got != "65534\n65533\n65533 1234\n" {
		t.Errorf("id = %q, want uid 65534, gid 65533, groups 65533 1234", got)
	}
}

func TestReadOnlyBindMount(t *testing.T) {
	src, host := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "hello"), []byte("hello from the volume\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(host, "mnt", "data")
	spec := sh(fmt.Sprintf(`cat %[1]s/hello; touch %[1]s/new 2>/dev/null && echo writable || echo read-only`, target))
	spec.Mounts = []Mount{{Source: src, Target: target + "/", ReadOnly: true}}
	dir, st := run(t, spec)
	if e := waitExit(t, dir); e.Code != 0 {
		t.Fatalf("exit = %+v: %s", e, logOf(t, dir, LogOptions{}))
	}
	if got := logOf(t, dir, LogOptions{}); got != "hello from the volume\nread-only\n" {
		t.Errorf("container saw %q", got)
	}
	want := []string{filepath.Join(host, "mnt"), target}
	if !slices.Equal(st.CreatedPaths, want) {
		t.Errorf("CreatedPaths = %q, want %q", st.CreatedPaths, want)
	}
	// On the host the target is the empty directory Start created.
	if ents, err := os.ReadDir(target); err != nil || len(ents) != 0 {
		t.Errorf("host target %s = %v, %v; want empty", target, ents, err)
	}
	if err := RemoveCreatedPaths(st.CreatedPaths); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(host, "mnt")); !os.IsNotExist(err) {
		t.Errorf("created paths not removed: %v", err)
	}
}

func TestMountTargetsRefused(t *testing.T) {
	src, host := t.TempDir(), t.TempDir()
	// A directory anyone may write, where a user could plant the link (links only root can
	// make or change are followed: TestResolveSystemLinks).
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(host, "link")); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"relative/path", "/a/../etc", "/", filepath.Join(host, "link", "x")} {
		dir, logFile := newContainer(t)
		spec := Spec{Path: "/bin/true", LogFile: logFile, Mounts: []Mount{{Source: src, Target: target}}}
		if _, err := Start(self, dir, spec); err == nil {
			t.Errorf("Start with mount target %q succeeded", target)
		}
	}
	if _, err := os.Lstat("/etc/x"); !os.IsNotExist(err) {
		t.Errorf("a target was created through the symlink: %v", err)
	}
}

// testNetns creates a network namespace for one test and returns its path.
func testNetns(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("vireo-ctest-%d", rand.Uint32())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	return "/run/netns/" + name
}

func TestNetnsAndHostname(t *testing.T) {
	netns := testNetns(t)
	spec := sh("tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d ' '; echo --; ls /sys/class/net; cat /proc/sys/kernel/hostname")
	spec.Netns, spec.Hostname = netns, "ctest-pod"
	dir, _ := run(t, spec)
	if e := waitExit(t, dir); e.Code != 0 {
		t.Fatalf("exit = %+v: %s", e, logOf(t, dir, LogOptions{}))
	}
	if got := logOf(t, dir, LogOptions{}); got != "lo\n--\nlo\nctest-pod\n" {
		t.Errorf("interfaces, /sys/class/net and hostname in the container = %q, want only lo and ctest-pod", got)
	}
	if h, _ := os.Hostname(); h == "ctest-pod" {
		t.Error("the host's name changed")
	}
}

func TestExec(t *testing.T) {
	spec := Spec{Path: "/bin/sleep", Args: []string{"1000"}, Env: []string{"FOO=from-the-container", "PATH=/usr/bin:/bin"}}
	dir, _ := run(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code, err := Exec(ctx, self, dir, ExecRequest{Command: []string{"sh", "-c", "echo $FOO; cat; echo to-stderr >&2; exit 5"},
		Stdin: strings.NewReader("from-stdin\n"), Stdout: &out, Stderr: &errb})
	if err != nil || code != 5 {
		t.Fatalf("Exec = %d, %v; want 5", code, err)
	}
	if out.String() != "from-the-container\nfrom-stdin\n" || errb.String() != "to-stderr\n" {
		t.Errorf("Exec stdout %q, stderr %q", out.String(), errb.String())
	}

	var tty logcapture.Buffer
	resize := make(chan TermSize, 1)
	resize <- TermSize{Width: 100, Height: 40}
	code, err = Exec(ctx, self, dir, ExecRequest{Command: []string{"tty"}, Stdout: &tty, TTY: true, Resize: resize})
	if err != nil || code != 0 || !regexp.MustCompile(`^/dev/pts/\d+\r?\n$`).MatchString(tty.String()) {
		t.Errorf("Exec tty = %d, %v, %q; want /dev/pts/N", code, err, tty.String())
	}

	if code, err := Exec(ctx, self, dir, ExecRequest{Command: []string{"vireo-ctest-missing"}}); err != nil || code != 127 {
		t.Errorf("Exec of a missing command = %d, %v; want 127", code, err)
	}

	// Cancelling the context kills the command.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	begin := time.Now()
	if _, err := Exec(short, self, dir, ExecRequest{Command: []string{"sleep", "1000"}}); err == nil || time.Since(begin) > 5*time.Second {
		t.Errorf("Exec past its context's deadline = %v after %s; want an error at once", err, time.Since(begin))
	}

	if err := Signal(dir, 9); err != nil {
		t.Fatal(err)
	}
	waitExit(t, dir)
	if _, err := Exec(ctx, self, dir, ExecRequest{Command: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("Exec in an exited container = %v, want a not running error", err)
	}
}

// TestMountsThatCoverTheirSourcesAndTheBinary: a volume mounted over a directory that holds
// a later volume's source and the container's own binary (as an emptyDir at /work would on a
// node whose files live under /work) still mounts the later volume and runs the binary.
func TestMountsThatCoverTheirSourcesAndTheBinary(t *testing.T) {
	dir, empty := t.TempDir(), t.TempDir()
	for _, d := range []string{"bin", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := os.ReadFile("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "cat"), cat, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "f"), []byte("seen through the cover\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Path: filepath.Join(dir, "bin", "cat"), Args: []string{filepath.Join(dir, "view", "f")},
		Mounts: []Mount{{Source: empty, Target: dir}, {Source: filepath.Join(dir, "data"), Target: filepath.Join(dir, "view")}}}
	cdir, _ := run(t, spec)
	if e := waitExit(t, cdir); e.Code != 0 {
		t.Fatalf("exit = %+v: %s", e, logOf(t, cdir, LogOptions{}))
	}
	if got := logOf(t, cdir, LogOptions{}); got != "seen through the cover\n" {
		t.Errorf("container saw %q", got)
	}
}

// TestExecWhenAVolumeCoversTheNodeBinary: exec still works when a volume covers the path of
// the binary that runs node-init (here /tmp, where the test binary lives).
func TestExecWhenAVolumeCoversTheNodeBinary(t *testing.T) {
	if !strings.HasPrefix(self, "/tmp/") {
		t.Skipf("the node binary %s is not under /tmp", self)
	}
	spec := sh("sleep 1000")
	spec.Mounts = []Mount{{Source: t.TempDir(), Target: "/tmp"}}
	dir, _ := run(t, spec)
	t.Cleanup(func() { _ = Signal(dir, syscall.SIGKILL) })
	var out bytes.Buffer
	code, err := Exec(t.Context(), self, dir, ExecRequest{Command: []string{"sh", "-c", "ls /tmp | wc -l"}, Stdout: &out, Stderr: &out})
	if err != nil || code != 0 || strings.TrimSpace(out.String()) != "0" {
		t.Fatalf("exec under a volume at /tmp: code %d, err %v, output %q", code, err, out.String())
	}
}

// TestNoNewPrivileges: with NoNewPrivileges the container runs with the no_new_privs bit
// (allowPrivilegeEscalation: false), and exec'd commands too; without it, not.
func TestNoNewPrivileges(t *testing.T) {
	for _, want := range []string{"0", "1"} {
		spec := sh("grep NoNewPrivs /proc/self/status | tr -d ' \\t'; sleep 1000")
		spec.NoNewPrivileges = want == "1"
		dir, _ := run(t, spec)
		t.Cleanup(func() { _ = Signal(dir, syscall.SIGKILL) })
		poll(t, "the container's status line", func() bool { return strings.Contains(logOf(t, dir, LogOptions{}), "NoNewPrivs") })
		if got := logOf(t, dir, LogOptions{}); got != "NoNewPrivs:"+want+"\n" {
			t.Errorf("NoNewPrivileges=%v: container printed %q", spec.NoNewPrivileges, got)
		}
		var out bytes.Buffer
		if _, err := Exec(t.Context(), self, dir, ExecRequest{Command: []string{"grep", "NoNewPrivs", "/proc/self/status"}, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(out.String()), ""); got != "NoNewPrivs:"+want {
			t.Errorf("NoNewPrivileges=%v: exec saw %q", spec.NoNewPrivileges, got)
		}
	}
}

// TestSourceBeneathRefusesSymlinks: the Pod-chosen part of a source (a subPath) is resolved
// without following symlinks, so a link a container planted in its volume cannot make
// another directory of the host appear in a container.
func TestSourceBeneathRefusesSymlinks(t *testing.T) {
	volume, secret := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(volume, "planted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(volume, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "mnt")
	for _, c := range []struct {
		sub  string
		want string
	}{{"real", "ok\n"}, {"planted", ""}} {
		spec := sh("ls " + target + " && echo ok")
		spec.Mounts = []Mount{{Source: filepath.Join(volume, c.sub), Beneath: volume, Target: target}}
		dir, logFile := newContainer(t)
		spec.LogFile = logFile
		_, err := Start(self, dir, spec)
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("subPath %q through a planted link: Start = %v, want a refusal naming the symlink", c.sub, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("subPath %q: %v", c.sub, err)
		}
		if e := waitExit(t, dir); e.Code != 0 || logOf(t, dir, LogOptions{}) != c.want {
			t.Errorf("subPath %q: exit %+v, log %q", c.sub, e, logOf(t, dir, LogOptions{}))
		}
	}
}

// TestExecLeftoversEndWithTheContainer: what a user starts through exec in the background, in
// a session of its own, ends with the container as a pid namespace's processes would.
func TestExecLeftoversEndWithTheContainer(t *testing.T) {
	dir, _ := run(t, sh("sleep 1000"))
	marker := fmt.Sprintf("%d", 100000+rand.IntN(800000))
	code, err := Exec(t.Context(), self, dir, ExecRequest{Command: []string{"sh", "-c", "setsid sleep " + marker + " </dev/null >/dev/null 2>&1 &"}})
	if err != nil || code != 0 {
		t.Fatalf("exec: %d, %v", code, err)
	}
	leftover := func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), "sleep\x00"+marker) {
				return true
			}
		}
		return false
	}
	poll(t, "the exec'd sleep running", leftover)
	if err := Signal(dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, dir)
	poll(t, "the exec'd sleep gone with the container", func() bool { return !leftover() })
}
