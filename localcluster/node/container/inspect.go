package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// exitGrace is how long Inspect waits for the shim to record an exit it is about to record
// (the container is gone but the shim still drains its output).
const exitGrace = drainTimeout + time.Second

// Inspect reads the container's state from dir. Running means the recorded pid is alive with the
// recorded start ticks, so a recycled pid never counts. A container that is gone without an
// exit.json is waited for (up to about 3 s) while its shim lives, since the shim is draining the
// output before recording the exit; if the shim is gone too (it was killed), the exit is reported
// as Exit{Code: -1, Reason: "Unknown"}, finished now.
func Inspect(dir string) (Status, error) {
	var st State
	ok, err := readJSON(filepath.Join(dir, stateFile), &st)
	if err != nil || !ok {
		return Status{}, err
	}
	s := Status{State: &st}
	deadline := time.Now().Add(exitGrace)
	for {
		var e Exit
		ok, err := readJSON(filepath.Join(dir, exitFile), &e)
		if err != nil {
			return s, err
		}
		if ok {
			s.Exit = &e
			return s, nil
		}
		if alive(st.Pid, st.StartTicks) {
			s.Running = true
			return s, nil
		}
		if !alive(st.ShimPid, st.ShimStartTicks) || time.Now().After(deadline) {
			s.Exit = &Exit{Code: -1, Reason: "Unknown", FinishedAt: time.Now().UTC()}
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Signal sends sig to the container's process group if the container is running; a container
// that is not running, or that exits meanwhile, is not an error.
func Signal(dir string, sig syscall.Signal) error {
	s, err := Inspect(dir)
	if err != nil {
		return err
	}
	if !s.Running {
		return nil
	}
	if err := syscall.Kill(-s.State.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling container process group %d (dir %s): %w", s.State.Pid, dir, err)
	}
	return nil
}

// Wait returns the container's exit once it has one (recorded by the shim, or Unknown if the
// shim is gone too), or the context's error.
func Wait(ctx context.Context, dir string) (Exit, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := Inspect(dir)
		if err != nil {
			return Exit{}, err
		}
		if s.State == nil {
			if b, err := os.ReadFile(filepath.Join(dir, startErrorFile)); err == nil {
				return Exit{}, fmt.Errorf("container in %s did not start: %s", dir, bytes.TrimSpace(b))
			}
		}
		if s.Exit != nil {
			return *s.Exit, nil
		}
		select {
		case <-ctx.Done():
			return Exit{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// alive reports whether pid runs with the given start ticks (zombies count as gone).
func alive(pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	t, state, err := procStat(pid)
	return err == nil && t == ticks && state != 'Z' && state != 'X'
}

// startTicks returns field 22 of /proc/PID/stat, the process's start time in clock ticks since
// boot: with the pid it names one process for the life of the machine.
func startTicks(pid int) (uint64, error) {
	t, _, err := procStat(pid)
	return t, err
}

// procStat returns the start ticks (field 22) and state (field 3) of /proc/PID/stat.
func procStat(pid int) (uint64, byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may contain anything, ")" included.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	t, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return t, fields[0][0], err
}

// WaitShimGone waits until the shim of the container in dir has exited (it records the exit
// just before it does), or ctx ends. Callers that must leave no process behind use it after Wait.
func WaitShimGone(ctx context.Context, dir string) error {
	var st State
	if ok, err := readJSON(filepath.Join(dir, stateFile), &st); err != nil || !ok {
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for alive(st.ShimPid, st.ShimStartTicks) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
