package container

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Resources are a container's limits, enforced with cgroups: version 2 where the host has the
// unified hierarchy with the memory and cpu controllers, else version 1's memory and cpu
// hierarchies.
type Resources struct {
	// Cgroup names the container's cgroup (relative, e.g. "vireo-local/<pod-uid>/<name>-<run>").
	Cgroup string `json:"cgroup,omitempty"`
	// MemoryBytes is the memory limit; 0 means none.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// CPUMilli is the CPU limit in thousandths of a CPU (a CFS quota per 100 ms); 0 means none.
	CPUMilli int64 `json:"cpuMilli,omitempty"`
}

// limited reports whether there is anything to enforce.
func (r Resources) limited() bool { return r.MemoryBytes > 0 || r.CPUMilli > 0 }

// cfsPeriod is the CFS period, in microseconds, CPU limits are quotas of (the kubelet's).
const cfsPeriod = 100000

const cgroupRoot = "/sys/fs/cgroup"

// CgroupsAvailable reports whether limits can be enforced on this host, and how.
func CgroupsAvailable() (string, bool) {
	if b, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		f := strings.Fields(string(b))
		return "cgroup v2", contains(f, "memory") && contains(f, "cpu")
	}
	_, errMem := os.Stat(filepath.Join(cgroupRoot, "memory", "cgroup.procs"))
	_, errCPU := os.Stat(filepath.Join(cgroupRoot, "cpu", "cgroup.procs"))
	return "cgroup v1", errMem == nil && errCPU == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cgroupDirs are the directories of a container's cgroup: one in the unified hierarchy (v2),
// or one per controller (v1), each below the caller's own cgroup of that controller (v1) or
// below the root (v2, whose rule against processes in inner cgroups forbids nesting under
// the node's own).
func cgroupDirs(r Resources) (dirs map[string]string, v2 bool, err error) {
	if strings.Contains(r.Cgroup, "..") || filepath.IsAbs(r.Cgroup) || r.Cgroup == "" {
		return nil, false, fmt.Errorf("cgroup name %q must be a relative path without \"..\"", r.Cgroup)
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return map[string]string{"": filepath.Join(cgroupRoot, r.Cgroup)}, true, nil
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, false, err
	}
	dirs = map[string]string{}
	for _, ctl := range []string{"memory", "cpu"} {
		dirs[ctl] = filepath.Join(cgroupRoot, ctl, own[ctl], r.Cgroup)
	}
	return dirs, false, nil
}

// ownCgroups maps each v1 controller to the calling process's cgroup path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out, sc.Err()
}

// openCgroupProcs opens the cgroup.procs files of the container's cgroups for writing, for a
// command Exec runs in the container to join them.
func openCgroupProcs(r Resources) ([]*os.File, error) {
	if !r.limited() {
		return nil, nil
	}
	dirs, _, err := cgroupDirs(r)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			continue // a controller without a limit has no cgroup of the container's
		}
		f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// enterCgroups creates the container's cgroup, writes its limits and moves the calling
// process (node-init, about to exec the container) into it.
func enterCgroups(r Resources) error {
	if !r.limited() {
		return nil
	}
	dirs, v2, err := cgroupDirs(r)
	if err != nil {
		return err
	}
	if v2 {
		return enterV2(dirs[""], r)
	}
	writes := map[string][][2]string{
		"memory": {{"memory.limit_in_bytes", strconv.FormatInt(r.MemoryBytes, 10)}},
		"cpu":    {{"cpu.cfs_period_us", strconv.Itoa(cfsPeriod)}, {"cpu.cfs_quota_us", strconv.FormatInt(r.CPUMilli*cfsPeriod/1000, 10)}},
	}
	for _, ctl := range []string{"memory", "cpu"} {
		if (ctl == "memory" && r.MemoryBytes == 0) || (ctl == "cpu" && r.CPUMilli == 0) {
			continue
		}
		if err := os.MkdirAll(dirs[ctl], 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dirs[ctl], err)
		}
		for _, w := range append(writes[ctl], [2]string{"cgroup.procs", "0"}) {
			if err := os.WriteFile(filepath.Join(dirs[ctl], w[0]), []byte(w[1]), 0o644); err != nil {
				return fmt.Errorf("cgroup %s: writing %s: %w", dirs[ctl], w[0], err)
			}
		}
	}
	return nil
}

// enterV2 makes the unified-hierarchy cgroup dir, with the memory and cpu controllers enabled
// on the way down from the root, its limits, and the caller in it.
func enterV2(dir string, r Resources) error {
	rel, _ := filepath.Rel(cgroupRoot, dir)
	cur := cgroupRoot
	for _, part := range strings.Split(rel, "/") {
		if err := os.WriteFile(filepath.Join(cur, "cgroup.subtree_control"), []byte("+memory +cpu"), 0o644); err != nil {
			return fmt.Errorf("enabling the memory and cpu controllers below %s: %w", cur, err)
		}
		cur = filepath.Join(cur, part)
		if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	writes := [][2]string{}
	if r.MemoryBytes > 0 {
		writes = append(writes, [2]string{"memory.max", strconv.FormatInt(r.MemoryBytes, 10)})
	}
	if r.CPUMilli > 0 {
		writes = append(writes, [2]string{"cpu.max", fmt.Sprintf("%d %d", r.CPUMilli*cfsPeriod/1000, cfsPeriod)})
	}
	for _, w := range append(writes, [2]string{"cgroup.procs", "0"}) {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: writing %s: %w", dir, w[0], err)
		}
	}
	return nil
}

// oomKilled reports whether the kernel killed a process of the container's cgroup for its
// memory limit.
func oomKilled(r Resources) bool {
	if !r.limited() || r.MemoryBytes == 0 {
		return false
	}
	dirs, v2, err := cgroupDirs(r)
	if err != nil {
		return false
	}
	file, dir := "memory.oom_control", dirs["memory"]
	if v2 {
		file, dir = "memory.events", dirs[""]
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// removeCgroups removes the container's (empty) cgroup directories and the parents that
// became empty, up to the name's first element.
func removeCgroups(r Resources) {
	if !r.limited() {
		return
	}
	dirs, _, err := cgroupDirs(r)
	if err != nil {
		return
	}
	depth := len(strings.Split(r.Cgroup, "/"))
	for _, dir := range dirs {
		// A cgroup stays busy for a moment after its last process died.
		for try := 0; try < 50; try++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for i := 1; i < depth; i++ {
			dir = filepath.Dir(dir)
			if os.Remove(dir) != nil {
				break
			}
		}
	}
}
