package localcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// killNetnsStragglers kills every process still inside the network namespace of one of this
// installation's nodes (where the kubelet, containerd, kube-proxy and hostNetwork containers
// run) once the nodes and their containers were stopped, and returns them (pid -> namespace).
// It is the last guard of `down`: a process that escaped the node's cgroups and mount namespace
// is found here by where it lives. The namespaces' names are this installation's own.
func killNetnsStragglers(n Network, nodes int) map[int]string {
	inodes := map[uint64]string{}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		name := e.Name()
		for i := range nodes {
			if name == n.NodeName(i) {
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
