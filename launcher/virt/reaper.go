package virt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// libvirtd daemonizes QEMU (a double fork and a new session), so QEMU's parent is whatever
// adopts orphans: the container's PID 1, which is the launcher (or, in a Pod that shares its
// process namespace, the pause process). Somebody must wait for it, and soon: libvirtd polls a
// stopped QEMU with kill(pid, 0) until it is gone, and an unreaped zombie looks alive. Measured
// on a node whose init reaped about once a second, every migration's source and every stopped
// guest waited 1-1.4 s after QEMU had exited; a launcher that is its container's PID 1 and
// reaps nothing would leave libvirtd waiting its full 15 s and then failing to kill QEMU.

// Orphan is a child process that has ended, as /proc shows it before it is reaped.
type Orphan struct {
	Pid, Session int
	// Command is the process's name (comm), such as "qemu-system-x86".
	Command string
}

// OtherSession reports whether o runs in another session than the caller: a daemonized process
// (QEMU) that came to the caller as an orphan, not one the caller started itself, whose exit
// status belongs to os/exec.
func OtherSession(o Orphan) bool {
	own, err := unix.Getsid(0)
	return err == nil && o.Session != own
}

// IsQEMU reports whether o is a QEMU process.
func IsQEMU(o Orphan) bool { return strings.HasPrefix(o.Command, "qemu-system") }

// ReapOrphans makes the caller a child subreaper, so the processes its children daemonize come
// to it when they are orphaned, and until ctx ends reaps at once every ended child that reap
// accepts (children the caller waits for itself, through os/exec, must not be accepted). When
// ctx ends the caller stops being a subreaper.
func ReapOrphans(ctx context.Context, reap func(Orphan) bool) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	ended := make(chan os.Signal, 1)
	signal.Notify(ended, syscall.SIGCHLD)
	go func() {
		defer signal.Stop(ended)
		defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }()
		// Each SIGCHLD brings a scan of /proc (one that comes during a scan waits in the
		// channel, so none is missed); the ticker is only a backstop: a scan costs a few ms
		// where Pods share the host's /proc.
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ended:
			case <-tick.C:
			}
			for _, o := range endedChildren() {
				if !reap(o) {
					continue
				}
				var ws unix.WaitStatus
				if _, err := unix.Wait4(o.Pid, &ws, unix.WNOHANG, nil); err != nil && !errors.Is(err, unix.ECHILD) {
					klog.ErrorS(err, "Reaping an orphaned process", "pid", o.Pid, "command", o.Command)
				}
			}
		}
	}()
	return nil
}

// endedChildren lists the caller's children that are zombies.
func endedChildren() []Orphan {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Orphan
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if o, ppid, zombie := parseStat(pid, data); zombie && ppid == self {
			out = append(out, o)
		}
	}
	return out
}

// parseStat reads /proc/<pid>/stat: the command, then after it the state, parent, process
// group and session.
func parseStat(pid int, data []byte) (o Orphan, ppid int, zombie bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return o, 0, false
	}
	fields := strings.Fields(string(data[end+1:]))
	if len(fields) < 4 {
		return o, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	session, _ := strconv.Atoi(fields[3])
	return Orphan{Pid: pid, Session: session, Command: string(data[open+1 : end])}, ppid, fields[0] == "Z"
}
