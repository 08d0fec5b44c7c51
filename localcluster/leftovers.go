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
// running once the nodes and their containers were stopped, with the container processes below
// them, and returns the shims it killed
// (pid -> container directory). A shim outlives its node by design (a restarted node adopts its
// containers), so one the node lost track of would otherwise run on after `down`. Shims are
// recognised by their command line: `vireo-local-shim node-shim <root>/nodes/...`.
func killLeftoverShims(root string) map[int]string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	prefix := abs + string(filepath.Separator) + "nodes" + string(filepath.Separator)
	procs, _ := os.ReadDir("/proc")
	shims := map[int]string{}
	parents := map[int]int{} // pid -> parent pid
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(pid); ppid > 0 {
			parents[pid] = ppid
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		if len(args) < 3 || string(args[1]) != "node-shim" || !bytes.HasPrefix(args[2], []byte(prefix)) {
			continue
		}
		shims[pid] = string(args[2])
	}
	// The container runs in a process group of its own below its shim: it goes first, since
	// killing the shim alone would leave it running, adopted by init.
	for pid, ppid := range parents {
		if _, ok := shims[ppid]; ok {
			killGroupOrProcess(pid)
		}
	}
	for pid := range shims {
		killGroupOrProcess(pid)
	}
	return shims
}

// killGroupOrProcess SIGKILLs pid's process group when pid leads it, else pid alone.
func killGroupOrProcess(pid int) {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// parentOf is pid's parent from /proc/<pid>/stat (0 when it cannot be read).
func parentOf(pid int) int {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(fields[1]))
	return ppid
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

// killNetnsStragglers kills every process still inside a network namespace of this
// installation's nodes (a node's own, where hostNetwork containers run, and its Pods') once
// the nodes and their containers were stopped, and returns them (pid -> namespace). It is the
// last guard of `down`: a container whose shim is gone (its node lost track of it) is found
// here by where it lives, not by its shim. The namespaces' names are this installation's own.
func killNetnsStragglers(n Network, nodes int) map[int]string {
	inodes := map[uint64]string{}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		name := e.Name()
		for i := range nodes {
			if name == n.NodeName(i) || strings.HasPrefix(name, PodNetnsPrefix+"-"+n.NodeName(i)+"-pod-") {
				var st syscall.Stat_t
				if syscall.Stat(filepath.Join("/run/netns", name), &st) == nil {
					inodes[st.Ino] = name
				}
			}
		}
	}
	killed := map[int]string{}
	if len(inodes) == 0 {
		return killed
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", p.Name(), "ns", "net"), &st) != nil {
			continue
		}
		if name, ok := inodes[st.Ino]; ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed[pid] = name
		}
	}
	return killed
}
