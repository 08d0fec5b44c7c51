package virt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// QEMUPid returns the pid of the QEMU process running domain name, from the pid file
// libvirt keeps in the layout's run directory, after checking that the process is alive and
// is that domain's QEMU.
func (l Layout) QEMUPid(name string) (int, error) {
	if err := checkDomainName(name); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(l.QEMUPidFile(name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("virt: domain %q has no QEMU process (no pid file in %s): %w", name, l.QEMURunDir, ErrNotFound)
		}
		return 0, fmt.Errorf("virt: read QEMU pid file of domain %q: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("virt: QEMU pid file %s holds %q, not a pid", l.QEMUPidFile(name), strings.TrimSpace(string(data)))
	}
	args, err := processArgs(pid)
	if err != nil || !isQEMUOf(args, l, name) {
		return 0, fmt.Errorf("virt: QEMU of domain %q (pid %d from %s) is not running: %w", name, pid, l.QEMUPidFile(name), ErrNotFound)
	}
	return pid, nil
}

// processArgs returns the command-line arguments of pid.
func processArgs(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00"), nil
}

// isQEMUOf reports whether args are those of a QEMU started by the daemon of layout l, for
// domain name when name is not empty. libvirt hands QEMU a master-key file in the domain's
// directory under QEMULibDir, so the layout appears on every QEMU command line it starts.
func isQEMUOf(args []string, l Layout, name string) bool {
	if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "qemu") {
		return false
	}
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, l.QEMULibDir+"/") {
		return false
	}
	return name == "" || strings.Contains(joined, "guest="+name+",") || strings.HasSuffix(joined, "guest="+name)
}

// qemuProcesses lists the QEMU processes started by the daemon of layout l, alive or not yet
// reaped, by scanning /proc: it finds them even when libvirtd died before writing a pid file.
// Only processes in the caller's mount namespace count: every launcher Pod has its layout at
// the same path, and where Pods share the host's process namespace (vireo-local's nodes) the
// other Pods' QEMUs are in /proc too, with the same paths on their command lines.
func qemuProcesses(l Layout) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		args, err := processArgs(pid)
		if err != nil || !isQEMUOf(args, l, "") {
			continue
		}
		// A process whose namespace cannot be read is gone or a zombie (nothing to kill), or
		// not inspectable by this user (not one of its QEMUs): either way not ours.
		if ns, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "mnt")); err != nil || ns != own {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// processGone reports whether pid no longer runs: it does not exist or is a zombie waiting
// for its parent (QEMU daemonizes, so its parent is init or a subreaper, not the launcher).
func processGone(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may itself contain ')'.
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X')
}

// killQEMUs kills every QEMU the daemon of layout l started and waits until they are gone.
func killQEMUs(ctx context.Context, l Layout) error {
	pids := qemuProcesses(l)
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("virt: kill QEMU pid %d: %w", pid, err)
		}
	}
	for _, pid := range pids {
		if err := waitGone(ctx, pid, 10*time.Second); err != nil {
			return fmt.Errorf("virt: QEMU pid %d: %w", pid, err)
		}
	}
	return nil
}

// waitGone polls until pid is gone, ctx ends or limit passes.
func waitGone(ctx context.Context, pid int, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !processGone(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("still running: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("still running after %s", limit)
		case <-tick.C:
		}
	}
	return nil
}
