package container

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// maxLogLine is the longest CRI log line the shim writes; longer output lines are split into
// partial (P) lines of this size, as the kubelet's runtimes do.
const maxLogLine = 16 * 1024

// drainTimeout bounds how long the shim waits for the container's output pipes to close after
// the container has exited (a process that left the container's process group may hold them).
const drainTimeout = 2 * time.Second

// errStartReported means the shim has already written the start error for Start to report.
var errStartReported = errors.New("start error reported")

// ShimMain is `vireo-local-shim node-shim DIR`: it starts the container of DIR/spec.json, logs its
// output, records its state and exit, and exits after it. It ignores SIGTERM, SIGINT and SIGHUP:
// the node signals the container, never the shim.
func ShimMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: vireo-local-shim node-shim DIR")
		return 2
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	dir := args[0]
	if err := runShim(dir); err != nil {
		if !errors.Is(err, errStartReported) {
			reportStartError(dir, err.Error())
		}
		return 1
	}
	return 0
}

// reportStartError writes DIR/start-error for Start, unless the container had started.
func reportStartError(dir, msg string) {
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return
	}
	_ = writeFileAtomic(filepath.Join(dir, startErrorFile), []byte(msg+"\n"), 0o600)
}

// runShim runs the container to its end.
func runShim(dir string) error {
	var cfg initConfig
	if ok, err := readJSON(filepath.Join(dir, specFile), &cfg); err != nil || !ok {
		return fmt.Errorf("reading %s: %v", filepath.Join(dir, specFile), err)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Spec.LogFile), 0o755); err != nil {
		return fmt.Errorf("creating the log directory: %w", err)
	}
	logf, err := os.OpenFile(cfg.Spec.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("opening the log file: %w", err)
	}
	defer logf.Close()
	p, err := newPipes()
	if err != nil {
		return err
	}
	defer p.closeAll()
	cmd := exec.Command(cfg.Self, "node-init", filepath.Join(dir, specFile))
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = p.outW, p.errW
	cmd.ExtraFiles = []*os.File{p.syncW} // fd 3 in node-init: startPipeFD
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Go makes / recursively private in the child right after unsharing the mount namespace
		// (syscall/exec_linux.go), so the container's mounts never propagate to the host.
		Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS,
		Setpgid:      true,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s node-init: %w", cfg.Self, err)
	}
	p.closeChildEnds()
	log := &criLog{f: logf}
	var copied sync.WaitGroup
	copied.Add(2)
	go func() { defer copied.Done(); copyCRI(p.outR, "stdout", log) }()
	go func() { defer copied.Done(); copyCRI(p.errR, "stderr", log) }()

	// The sync pipe closes unread when node-init has exec'd the binary.
	msg, _ := io.ReadAll(p.syncR)
	if len(msg) > 0 {
		reportStartError(dir, string(msg))
		_ = cmd.Wait()
		removeCgroups(cfg.Spec.Resources)
		return errStartReported
	}
	// The container's mount namespace, which also holds whatever kubectl exec starts in it. The
	// open descriptor keeps the namespace alive until the shim is done with it: a freed
	// namespace's number can go to a new container's at once, whose processes killNamespace
	// would then kill.
	mntNS, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
	if nsFile, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid)); err == nil {
		defer nsFile.Close()
		if again, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid)); again != mntNS {
			mntNS = "" // the container ended in between: nothing of its can be left
		}
	} else {
		mntNS = ""
	}
	st := State{Pid: cmd.Process.Pid, StartedAt: time.Now().UTC(), CreatedPaths: cfg.CreatedPaths, ShimPid: os.Getpid()}
	st.StartTicks, _ = startTicks(st.Pid)
	st.ShimStartTicks, _ = startTicks(st.ShimPid)
	if err := writeJSONAtomic(filepath.Join(dir, stateFile), st, 0o600); err != nil {
		_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return fmt.Errorf("recording the container's state: %w", err)
	}
	_ = cmd.Wait()
	finished := time.Now().UTC()
	// The container's main process is gone: end the rest of its process group, and what exec
	// left running in its mount namespace, as the end of a container's pid namespace would.
	_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
	killNamespace(mntNS)
	drained := make(chan struct{})
	go func() { copied.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainTimeout):
	}
	exit := exitOf(cmd.ProcessState, finished)
	if exit.Signal == int(syscall.SIGKILL) && oomKilled(cfg.Spec.Resources) {
		exit.Reason = "OOMKilled"
	}
	removeCgroups(cfg.Spec.Resources)
	return writeJSONAtomic(filepath.Join(dir, exitFile), exit, 0o600)
}

// exitOf converts a wait status.
func exitOf(ps *os.ProcessState, finished time.Time) Exit {
	e := Exit{Code: -1, Reason: "Unknown", FinishedAt: finished}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return e
	}
	if ws.Signaled() {
		e.Signal = int(ws.Signal())
		e.Code = 128 + e.Signal
	} else {
		e.Code = ws.ExitStatus()
	}
	e.Reason = "Error"
	if e.Code == 0 {
		e.Reason = "Completed"
	}
	return e
}

// shimPipes are the container's output pipes and the start pipe.
type shimPipes struct {
	outR, outW, errR, errW, syncR, syncW *os.File
}

func newPipes() (*shimPipes, error) {
	var p shimPipes
	var err error
	for _, pair := range [][2]**os.File{{&p.outR, &p.outW}, {&p.errR, &p.errW}, {&p.syncR, &p.syncW}} {
		if *pair[0], *pair[1], err = os.Pipe(); err != nil {
			p.closeAll()
			return nil, err
		}
	}
	return &p, nil
}

// closeChildEnds closes the ends the child holds, so reads see EOF when it is done with them.
func (p *shimPipes) closeChildEnds() {
	for _, f := range []*os.File{p.outW, p.errW, p.syncW} {
		f.Close()
	}
}

func (p *shimPipes) closeAll() {
	for _, f := range []*os.File{p.outR, p.outW, p.errR, p.errW, p.syncR, p.syncW} {
		if f != nil {
			f.Close()
		}
	}
}

// criLog writes CRI log lines, one write each, from both streams.
type criLog struct {
	mu sync.Mutex
	f  *os.File
}

// line writes `<RFC3339Nano UTC> <stream> <F|P> <msg>\n`.
func (l *criLog) line(stream string, partial bool, msg []byte) {
	tag := " F "
	if partial {
		tag = " P "
	}
	buf := make([]byte, 0, len(msg)+48)
	buf = time.Now().UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, ' ')
	buf = append(buf, stream...)
	buf = append(buf, tag...)
	buf = append(buf, msg...)
	buf = append(buf, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(buf)
}

// copyCRI copies r to the log until EOF: complete lines as F, lines longer than maxLogLine in
// P pieces, and an unterminated last line as P.
func copyCRI(r io.Reader, stream string, l *criLog) {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			l.line(stream, false, line[:len(line)-1])
		case errors.Is(err, bufio.ErrBufferFull):
			l.line(stream, true, line)
		default:
			if len(line) > 0 {
				l.line(stream, true, line)
			}
			return
		}
	}
}

// killNamespace kills every process in mount namespace ns (a readlink of /proc/PID/ns/mnt), but
// never one sharing the shim's own: a namespace read too late would be the host's.
func killNamespace(ns string) {
	own, _ := os.Readlink("/proc/self/ns/mnt")
	if ns == "" || ns == own {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && link == ns {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
