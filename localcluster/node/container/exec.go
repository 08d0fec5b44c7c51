package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// execWaitDelay bounds how long Exec waits for output pipes held open by the command's own
// children once the command has exited.
const execWaitDelay = 2 * time.Second

// Exec runs req.Command in the running container of dir, as `kubectl exec` does: in its mount,
// network and UTS namespaces, with its user, groups, environment and working directory. A Go
// process is multi-threaded and the kernel refuses it setns into a mount namespace, so the
// namespaces are entered by util-linux nsenter, which then execs `self node-init --exec FILE`.
// The command's exit code is returned with a nil error, whatever it is; cancelling ctx kills the
// command and its process group.
func Exec(ctx context.Context, self, dir string, req ExecRequest) (int, error) {
	if len(req.Command) == 0 {
		return -1, errors.New("exec: no command given")
	}
	s, err := Inspect(dir)
	if err != nil {
		return -1, err
	}
	if !s.Running {
		return -1, fmt.Errorf("exec: the container in %s is not running", dir)
	}
	var cfg initConfig
	if _, err := readJSON(filepath.Join(dir, specFile), &cfg); err != nil {
		return -1, err
	}
	c := cfg.Spec
	spec := Spec{Path: req.Command[0], Args: req.Command[1:], Env: c.Env, WorkingDir: c.WorkingDir,
		UID: c.UID, GID: c.GID, SupplementalGroups: c.SupplementalGroups, NoNewPrivileges: c.NoNewPrivileges}
	procs, err := openCgroupProcs(c.Resources)
	if err != nil {
		return -1, err
	}
	defer func() {
		for _, p := range procs {
			p.Close()
		}
	}()
	icfg := initConfig{Spec: spec, Self: self}
	for i := range procs {
		icfg.CgroupProcsFDs = append(icfg.CgroupProcsFDs, 5+i) // after the binary (3) and this file (4)
	}
	f, err := os.CreateTemp(dir, "exec-*.json")
	if err != nil {
		return -1, err
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := writeJSONAtomic(f.Name(), icfg, 0o600); err != nil {
		return -1, err
	}
	// The binary and the spec file are handed over as descriptors (3 and 4): in the
	// container's mount namespace a volume may cover their paths (an emptyDir at /work hides
	// a node whose files live under /work).
	selfFile, err := os.Open(self)
	if err != nil {
		return -1, err
	}
	defer selfFile.Close()
	execSpec, err := os.Open(f.Name())
	if err != nil {
		return -1, err
	}
	defer execSpec.Close()
	cmd := exec.CommandContext(ctx, "nsenter", "-t", strconv.Itoa(s.State.Pid), "-m", "-n", "-u", "--",
		"/proc/self/fd/3", "node-init", "--exec", "/proc/self/fd/4")
	cmd.ExtraFiles = append([]*os.File{selfFile, execSpec}, procs...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.WaitDelay = execWaitDelay
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if req.TTY {
		err = runTTY(cmd, req)
	} else {
		err = runPipes(cmd, req)
	}
	if cmd.ProcessState == nil {
		return -1, fmt.Errorf("exec in container %s: %w", dir, err)
	}
	if ctx.Err() != nil {
		return -1, fmt.Errorf("exec in container %s: %w", dir, ctx.Err())
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// runPipes runs cmd in its own process group with the request's streams.
func runPipes(cmd *exec.Cmd, req ExecRequest) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = req.Stdout, req.Stderr
	var stdin io.WriteCloser
	if req.Stdin != nil {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if stdin != nil {
		// Not waited for: a client's stream may never end; Wait closes the pipe.
		go func() {
			_, _ = io.Copy(stdin, req.Stdin)
			stdin.Close()
		}()
	}
	return cmd.Wait()
}

// runTTY runs cmd as the session leader of a new pseudo-terminal (its process group too), copies
// the terminal both ways and applies the resizes.
func runTTY(cmd *exec.Cmd, req ExecRequest) error {
	ptmx, err := pty.Start(cmd)
	if err != nil {
		return err
	}
	defer ptmx.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sz, ok := <-req.Resize:
				if !ok {
					return
				}
				_ = pty.Setsize(ptmx, &pty.Winsize{Cols: sz.Width, Rows: sz.Height})
			case <-done:
				return
			}
		}
	}()
	if req.Stdin != nil {
		go func() { _, _ = io.Copy(ptmx, req.Stdin) }()
	}
	out := req.Stdout
	if out == nil {
		out = io.Discard
	}
	copied := make(chan struct{})
	go func() {
		// Ends with EIO once every holder of the terminal has closed it.
		_, _ = io.Copy(out, ptmx)
		close(copied)
	}()
	err = cmd.Wait()
	select {
	case <-copied:
	case <-time.After(execWaitDelay):
	}
	return err
}
