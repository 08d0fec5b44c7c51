package container

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestResourceLimitsAreEnforced: a container over its memory limit is killed and reported as
// OOMKilled; its CPU limit is the CFS quota of its cgroup; the cgroups go with the container.
func TestResourceLimitsAreEnforced(t *testing.T) {
	if how, ok := CgroupsAvailable(); !ok {
		t.Skipf("this host's %s lacks the memory or cpu controller", how)
	}
	name := fmt.Sprintf("vireo-ctest-%d/c", rand.Uint32())
	hog := sh(`x=$(head -c 67108864 /dev/zero | tr '\0' a); echo survived`)
	// In a network namespace, like a Pod's: there /sys is that namespace's sysfs.
	hog.Resources, hog.Netns = Resources{Cgroup: name, MemoryBytes: 16 << 20}, testNetns(t)
	dir, _ := run(t, hog)
	if e := waitExit(t, dir); e.Signal != int(syscall.SIGKILL) || e.Reason != "OOMKilled" {
		t.Fatalf("a container allocating 64 MiB under a 16 MiB limit: exit %+v, log %q; want SIGKILL, OOMKilled", e, logOf(t, dir, LogOptions{}))
	}

	sleeper := sh("sleep 1000")
	sleeper.Resources = Resources{Cgroup: name, CPUMilli: 250, MemoryBytes: 64 << 20}
	dir, st := run(t, sleeper)
	dirs, v2, err := cgroupDirs(sleeper.Resources)
	if err != nil {
		t.Fatal(err)
	}
	quotaFile, want := filepath.Join(dirs["cpu"], "cpu.cfs_quota_us"), "25000"
	procs := filepath.Join(dirs["cpu"], "cgroup.procs")
	if v2 {
		quotaFile, want, procs = filepath.Join(dirs[""], "cpu.max"), "25000 100000", filepath.Join(dirs[""], "cgroup.procs")
	}
	if b, err := os.ReadFile(quotaFile); err != nil || strings.TrimSpace(string(b)) != want {
		t.Errorf("%s = %q (%v), want %q", quotaFile, b, err, want)
	}
	if b, err := os.ReadFile(procs); err != nil || !strings.Contains(string(b), fmt.Sprint(st.Pid)) {
		t.Errorf("container pid %d not in %s: %q (%v)", st.Pid, procs, b, err)
	}
	if err := Signal(dir, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, dir)
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left after the container exited (%v)", d, err)
		}
	}
}

// TestExecJoinsTheContainersCgroup: a command exec'd in a limited container is under the
// same memory limit (kubectl exec cannot escape a Pod's limits).
func TestExecJoinsTheContainersCgroup(t *testing.T) {
	if how, ok := CgroupsAvailable(); !ok {
		t.Skipf("this host's %s lacks the memory or cpu controller", how)
	}
	spec := sh("sleep 1000")
	// Room enough that the kernel's OOM killer has no doubt which process to kill: the shell
	// grows far past everything else in the cgroup (page cache of the binaries included).
	spec.Resources = Resources{Cgroup: fmt.Sprintf("vireo-ctest-%d/c", rand.Uint32()), MemoryBytes: 64 << 20}
	spec.Netns = testNetns(t)
	dir, _ := run(t, spec)
	t.Cleanup(func() { _ = Signal(dir, syscall.SIGKILL) })
	code, err := Exec(t.Context(), self, dir, ExecRequest{Command: []string{"sh", "-c", `x=$(head -c 536870912 /dev/zero | tr '\0' a); echo survived`}})
	if err != nil || code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exec allocating 512 MiB in a container limited to 64 MiB: code %d, err %v; want %d", code, err, 128+int(syscall.SIGKILL))
	}
	if st, err := Inspect(dir); err != nil || !st.Running {
		t.Errorf("the container itself should still run: %+v, %v", st, err)
	}
}
