package virt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LowerVCPUPriority gives the vCPU threads of domain name's QEMU (named "CPU <n>/TCG" or
// "CPU <n>/KVM") the niceness nice, and returns how many it changed. QEMU's main thread (device
// emulation, the monitor), libvirtd and the launcher keep theirs, so they answer promptly while
// guests compute: under TCG a booting guest takes a whole core, and without this the starts of
// the node's other VMIs wait behind it. Inside a Pod's CPU cgroup it only orders the Pod's own
// threads; the Pod's share of the node is the cgroup's. Raising niceness needs no privilege.
func (d *Daemon) LowerVCPUPriority(name string, nice int) (int, error) {
	pid, err := d.layout.QEMUPid(name)
	if err != nil {
		return 0, err
	}
	taskDir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(taskDir)
	if err != nil {
		return 0, fmt.Errorf("virt: list QEMU's threads: %w", err)
	}
	changed := 0
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(taskDir, task.Name(), "comm"))
		if err != nil || !isVCPUThread(strings.TrimSpace(string(comm))) {
			continue // a thread that ended meanwhile, or not a vCPU
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
			return changed, fmt.Errorf("virt: set niceness %d on QEMU vCPU thread %d: %w", nice, tid, err)
		}
		changed++
	}
	return changed, nil
}

// isVCPUThread reports whether a QEMU thread name is a vCPU's: "CPU 0/TCG", "CPU 1/KVM".
func isVCPUThread(comm string) bool {
	rest, ok := strings.CutPrefix(comm, "CPU ")
	if !ok {
		return false
	}
	n, accel, ok := strings.Cut(rest, "/")
	if _, err := strconv.Atoi(n); err != nil || !ok {
		return false
	}
	return accel != ""
}
