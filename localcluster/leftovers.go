package localcluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// killLeftoverShims kills the container shims of this installation's nodes that are still
// running once the nodes and their containers were stopped, and returns what it killed
// ("pid dir" each). A shim outlives its node by design (a restarted node adopts its
// containers), so one the node lost track of would otherwise run on after `down`. Shims are
// recognised by their command line: `vireo-local node-shim <root>/nodes/...`.
func killLeftoverShims(root string) []string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	prefix := abs + string(filepath.Separator) + "nodes" + string(filepath.Separator)
	procs, _ := os.ReadDir("/proc")
	var killed []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		if len(args) < 3 || string(args[1]) != "node-shim" || !bytes.HasPrefix(args[2], []byte(prefix)) {
			continue
		}
		// The shim leads its container's process group: the container goes with it.
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		} else {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		killed = append(killed, strconv.Itoa(pid)+" "+string(args[2]))
	}
	return killed
}
