package container

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// self is this test binary, which acts as vireo-local node-shim and node-init (see TestMain), or
// the binary named by $VIREO_CTEST_SELF (e.g. a built vireo-local, to test its hidden commands).
var self string

// testBinary is this test binary.
var testBinary string

// TestMain runs the test binary as the shim, as node-init, or as a short-lived process that calls
// Start and exits, when asked to by its first argument; otherwise it runs the tests. It needs root.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "node-shim":
			os.Exit(ShimMain(os.Args[2:]))
		case "node-init":
			os.Exit(InitMain(os.Args[2:]))
		case "start-and-exit":
			os.Exit(startAndExit(os.Args[2:]))
		}
	}
	if os.Geteuid() != 0 {
		fmt.Println("skipping: the container tests need root (namespaces, mounts, setuid)")
		os.Exit(0)
	}
	var err error
	if testBinary, err = os.Executable(); err != nil {
		panic(err)
	}
	self = testBinary
	if s := os.Getenv("VIREO_CTEST_SELF"); s != "" {
		self = s
	}
	os.Exit(m.Run())
}

// startAndExit is `start-and-exit SELF DIR SPECJSON`: Start, print the pid, exit.
func startAndExit(args []string) int {
	var spec Spec
	if err := json.Unmarshal([]byte(args[2]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := Start(args[0], args[1], spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(st.Pid)
	return 0
}

// newContainer returns a container directory and its spec's log file, and kills whatever runs
// there at cleanup.
func newContainer(t *testing.T) (dir, logFile string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "c")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = Signal(dir, syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
			if _, err := Wait(ctx, dir); err != nil {
				t.Errorf("cleanup: waiting for the container in %s: %v", dir, err)
			}
		}
	})
	return dir, filepath.Join(base, "logs", "c.log")
}

// run starts spec in a new container and fails the test if it does not start.
func run(t *testing.T, spec Spec) (dir string, st State) {
	t.Helper()
	dir, spec.LogFile = newContainer(t)
	st, err := Start(self, dir, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return dir, st
}

// waitExit waits up to 20 s for the container to exit.
func waitExit(t *testing.T, dir string) Exit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := Wait(ctx, dir)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return e
}

// logOf reads the container's log as kubectl logs would.
func logOf(t *testing.T, dir string, opts LogOptions) string {
	t.Helper()
	var cfg initConfig
	if _, err := readJSON(filepath.Join(dir, specFile), &cfg); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ReadLog(context.Background(), cfg.Spec.LogFile, opts, &b, nil); err != nil {
		t.Fatalf("ReadLog: %v", err)
	}
	return b.String()
}

func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"}}
}

func TestExitCodeAndCRILog(t *testing.T) {
	dir, _ := run(t, sh("echo out1; echo err1 >&2; exit 3"))
	e := waitExit(t, dir)
	if e.Code != 3 || e.Reason != "Error" || e.Signal != 0 || e.FinishedAt.IsZero() {
		t.Fatalf("exit = %+v, want code 3, reason Error, no signal", e)
	}
	var cfg initConfig
	if _, err := readJSON(filepath.Join(dir, specFile), &cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(cfg.Spec.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^(\S+) (stdout|stderr) F (.*)$`)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("log line %q is not a CRI line", l)
		}
		if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil || !strings.HasSuffix(m[1], "Z") {
			t.Errorf("log time %q is not RFC3339Nano UTC: %v", m[1], err)
		}
		got[m[2]] = m[3]
	}
	if got["stdout"] != "out1" || got["stderr"] != "err1" {
		t.Errorf("log = %q, want stdout out1 and stderr err1", raw)
	}
	if fi, err := os.Stat(cfg.Spec.LogFile); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("log file mode = %v, %v; want 0640", fi.Mode(), err)
	}
}

func TestContainerSignalsAreDefault(t *testing.T) {
	// The shim ignores SIGTERM, SIGINT and SIGHUP; the container must not inherit that.
	dir, _ := run(t, sh("grep -E '^Sig(Ign|Blk):' /proc/self/status"))
	waitExit(t, dir)
	if got := logOf(t, dir, LogOptions{}); got != "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n" {
		t.Errorf("the container's blocked and ignored signals: %q, want none", got)
	}
}

func TestSignalTerm(t *testing.T) {
	dir, _ := run(t, Spec{Path: "sleep", Args: []string{"1000"}})
	if s, err := Inspect(dir); err != nil || !s.Running {
		t.Fatalf("Inspect = %+v, %v; want running", s, err)
	}
	if err := Signal(dir, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	e := waitExit(t, dir)
	if e.Signal != 15 || e.Code != 143 || e.Reason != "Error" {
		t.Fatalf("exit = %+v, want signal 15, code 143", e)
	}
	if err := Signal(dir, syscall.SIGTERM); err != nil {
		t.Errorf("Signal on an exited container: %v", err)
	}
}

func TestShimSurvivesItsCaller(t *testing.T) {
	dir, logFile := newContainer(t)
	spec, _ := json.Marshal(Spec{Path: "/bin/sleep", Args: []string{"1000"}, LogFile: logFile})
	out, err := exec.Command(testBinary, "start-and-exit", self, dir, string(spec)).CombinedOutput()
	if err != nil {
		t.Fatalf("start-and-exit: %v: %s", err, out)
	}
	// The caller has exited (Output waited for it): the container still runs.
	s, err := Inspect(dir)
	if err != nil || !s.Running || strconv.Itoa(s.State.Pid) != strings.TrimSpace(string(out)) {
		t.Fatalf("Inspect = %+v, %v; want pid %s running", s, err, out)
	}
	// The shim ignores the signals a node or a terminal could send it.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.State.ShimPid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`SigIgn:\s*([0-9a-f]+)`).FindSubmatch(status)
	ign, _ := strconv.ParseUint(string(m[1]), 16, 64)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if ign&(1<<(uint(sig)-1)) == 0 {
			t.Errorf("the shim does not ignore %v", sig)
		}
	}
	if err := Signal(dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if e := waitExit(t, dir); e.Signal != 9 {
		t.Errorf("exit = %+v, want signal 9", e)
	}
}

func TestPidReuseIsNotRunning(t *testing.T) {
	other := exec.Command("sleep", "1000")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	ticks, err := startTicks(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// What a container that lived at this pid before would have recorded.
	if err := writeJSONAtomic(filepath.Join(dir, stateFile), State{Pid: other.Process.Pid, StartTicks: ticks - 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Inspect(dir)
	if err != nil || s.Running || s.Exit == nil || s.Exit.Code != -1 || s.Exit.Reason != "Unknown" {
		t.Fatalf("Inspect = %+v (exit %+v), %v; want not running, exit Unknown", s, s.Exit, err)
	}
	if err := Signal(dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, state, err := procStat(other.Process.Pid); err != nil || state == 'Z' {
		t.Fatalf("the unrelated process was signalled (state %c, %v)", state, err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	for _, path := range []string{"/nonexistent/vireo-ctest", "vireo-ctest-no-such-command"} {
		dir, logFile := newContainer(t)
		begin := time.Now()
		_, err := Start(self, dir, Spec{Path: path, LogFile: logFile})
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "no such file") {
			t.Errorf("Start(%s) = %v; want an error naming the missing binary", path, err)
		}
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("Start(%s) took %s", path, d)
		}
	}
}

// poll waits up to 10 s for cond.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestShimKilledMeansUnknownExit(t *testing.T) {
	dir, st := run(t, Spec{Path: "/bin/sleep", Args: []string{"1000"}})
	if err := syscall.Kill(st.ShimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "the shim to die", func() bool { return !alive(st.ShimPid, st.ShimStartTicks) })
	if s, err := Inspect(dir); err != nil || !s.Running {
		t.Fatalf("Inspect after the shim died = %+v, %v; want the container still running", s, err)
	}
	if err := Signal(dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(t, "the container to die", func() bool { return !alive(st.Pid, st.StartTicks) })
	if e := waitExit(t, dir); e.Code != -1 || e.Reason != "Unknown" {
		t.Errorf("exit without a shim = %+v, want code -1, reason Unknown", e)
	}
}
