package localcluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killLeftoverShims kills the container shims of this installation's nodes that are still
// running once the nodes and their containers were stopped, and returns what it killed
// (pid -> container directory). A shim outlives its node by design (a restarted node adopts its
// containers), so one the node lost track of would otherwise run on after `down`. Shims are
// recognised by their command line: `vireo-local node-shim <root>/nodes/...`.
func killLeftoverShims(root string) map[int]string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	prefix := abs + string(filepath.Separator) + "nodes" + string(filepath.Separator)
	procs, _ := os.ReadDir("/proc")
	killed := map[int]string{}
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
		killed[pid] = string(args[2])
	}
	return killed
}

// logLinesAbout returns the last n lines of the installation's logs that mention the Pod whose
// shim ran in dir (…/pods/<uid>/containers/…), as evidence of how its node lost track of it.
func logLinesAbout(logsDir, dir string, n int) []string {
	uid := podUIDOf(dir)
	if uid == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if bytes.Contains(line, []byte(uid)) {
				lines = append(lines, filepath.Base(f)+": "+string(line))
			}
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// podUIDOf is the Pod UID in a container directory path (…/pods/<uid>/containers/…).
func podUIDOf(dir string) string {
	parts := strings.Split(filepath.ToSlash(dir), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "pods" && parts[i+2] == "containers" {
			return parts[i+1]
		}
	}
	return ""
}
