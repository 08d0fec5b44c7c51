package container

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startTimeout bounds how long Start waits for the shim to report the container running.
const startTimeout = 10 * time.Second

// Start starts the container described by spec under dir (created 0700 by the caller) through a
// detached shim, `self node-shim dir`, and returns once the container's binary runs. self is the
// shim binary, vireo-local-shim. A binary that cannot be exec'd, or a shim that cannot start it, is an error
// naming both; mount targets Start created on the host are then removed again.
func Start(self, dir string, spec Spec) (State, error) {
	if err := validate(&spec); err != nil {
		return State{}, err
	}
	if st, err := Inspect(dir); err == nil && st.Running {
		return State{}, fmt.Errorf("container in %s is already running (pid %d): stop it before starting it again", dir, st.State.Pid)
	}
	for _, f := range []string{stateFile, exitFile, startErrorFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return State{}, err
		}
	}
	created, err := createTargets(spec.Mounts)
	if err != nil {
		_ = RemoveCreatedPaths(created)
		return State{}, err
	}
	st, err := startShim(self, dir, initConfig{Spec: spec, Self: self, CreatedPaths: created})
	if err != nil {
		_ = RemoveCreatedPaths(created)
		return State{}, err
	}
	return st, nil
}

// startShim writes the config, starts the shim in its own session and waits for state.json or
// the shim's start error.
func startShim(self, dir string, cfg initConfig) (State, error) {
	if err := writeJSONAtomic(filepath.Join(dir, specFile), cfg, 0o600); err != nil {
		return State{}, err
	}
	cmd := exec.Command(self, "node-shim", dir)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return State{}, fmt.Errorf("starting the container shim %s node-shim %s: %w", self, dir, err)
	}
	// Reap the shim if it exits while we live; once we exit, init adopts it.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var shimExit error
	shimDone := false
	for {
		if b, err := os.ReadFile(filepath.Join(dir, startErrorFile)); err == nil {
			return State{}, fmt.Errorf("starting container binary %s (dir %s): %s", cfg.Spec.Path, dir, strings.TrimSpace(string(b)))
		}
		var st State
		if ok, err := readJSON(filepath.Join(dir, stateFile), &st); err != nil || ok {
			return st, err
		}
		if shimDone {
			return State{}, fmt.Errorf("the container shim %s node-shim %s exited without starting %s: %v", self, dir, cfg.Spec.Path, shimExit)
		}
		select {
		case shimExit = <-exited:
			// Look at the files once more: the shim writes them before exiting.
			shimDone = true
		case <-deadline.C:
			// The shim's session goes, container included if it started late: a retry must not
			// leave a second, untracked copy running.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			var late State
			if ok, _ := readJSON(filepath.Join(dir, stateFile), &late); ok && late.Pid > 0 {
				_ = syscall.Kill(-late.Pid, syscall.SIGKILL)
			}
			return State{}, fmt.Errorf("container %s (dir %s) did not start within %s", cfg.Spec.Path, dir, startTimeout)
		case <-tick.C:
		}
	}
}

// validate checks the paths of a Spec and cleans its mount targets.
func validate(spec *Spec) error {
	if spec.Path == "" {
		return errors.New("container spec: path is empty: a binary to run is required")
	}
	if !filepath.IsAbs(spec.LogFile) {
		return fmt.Errorf("container spec: logFile %q must be an absolute path", spec.LogFile)
	}
	if spec.WorkingDir != "" && !filepath.IsAbs(spec.WorkingDir) {
		return fmt.Errorf("container spec: workingDir %q must be an absolute path", spec.WorkingDir)
	}
	if spec.Netns != "" && !filepath.IsAbs(spec.Netns) {
		return fmt.Errorf("container spec: netns %q must be the absolute path of a network namespace", spec.Netns)
	}
	mounts := make([]Mount, len(spec.Mounts))
	for i, m := range spec.Mounts {
		t, err := cleanTarget(m.Target)
		if err == nil {
			t, err = resolveSystemLinks(t)
		}
		if err != nil {
			return fmt.Errorf("container spec: mounts[%d]: %w", i, err)
		}
		if !filepath.IsAbs(m.Source) {
			return fmt.Errorf("container spec: mounts[%d]: source %q must be an absolute path", i, m.Source)
		}
		m.Target = t
		mounts[i] = m
	}
	spec.Mounts = mounts
	return nil
}

// cleanTarget accepts absolute paths without ".." elements, other than "/", and cleans them.
func cleanTarget(target string) (string, error) {
	if !filepath.IsAbs(target) {
		return "", fmt.Errorf("target %q must be an absolute path", target)
	}
	for _, e := range strings.Split(target, "/") {
		if e == ".." {
			return "", fmt.Errorf("target %q must not contain \"..\"", target)
		}
	}
	t := filepath.Clean(target)
	if t == "/" {
		return "", errors.New("target \"/\" cannot be mounted over")
	}
	return t, nil
}

// createTargets creates the missing mount targets on the host, each as a directory or an empty
// file like its source, and returns what it created.
func createTargets(mounts []Mount) ([]string, error) {
	var created []string
	for _, m := range mounts {
		stat := os.Stat
		if m.Beneath != "" {
			stat = os.Lstat // node-init refuses a symlink there; do not follow it here either
		}
		fi, err := stat(m.Source)
		if err != nil {
			return created, fmt.Errorf("mount source for %s: %w", m.Target, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return created, fmt.Errorf("mount source %s for %s is a symlink, which is refused", m.Source, m.Target)
		}
		c, err := createTarget(m.Target, fi.IsDir())
		created = append(created, c...)
		if err != nil {
			return created, err
		}
	}
	return created, nil
}

// createTarget walks target from / one component at a time through directory descriptors opened
// with O_NOFOLLOW, creating what is missing: a symlink anywhere on the way, even one planted
// while we walk, is refused rather than followed.
func createTarget(target string, isDir bool) ([]string, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer func() { unix.Close(fd) }()
	var created []string
	parts := strings.Split(strings.TrimPrefix(target, "/"), "/")
	cur := "/"
	for i, name := range parts {
		last := i == len(parts)-1
		cur = filepath.Join(cur, name)
		var st unix.Stat_t
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == nil:
			kind := st.Mode & unix.S_IFMT
			if kind == unix.S_IFLNK {
				return created, fmt.Errorf("mount target %s: %s is a symlink, which is refused", target, cur)
			}
			if (!last || isDir) && kind != unix.S_IFDIR {
				return created, fmt.Errorf("mount target %s: %s exists and is not a directory", target, cur)
			}
			if last && !isDir && kind == unix.S_IFDIR {
				return created, fmt.Errorf("mount target %s is a directory but its source is a file", target)
			}
		case errors.Is(err, unix.ENOENT):
			if last && !isDir {
				f, err := unix.Openat(fd, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
				if err != nil {
					return created, fmt.Errorf("creating mount target %s: %w", cur, err)
				}
				unix.Close(f)
			} else if err := unix.Mkdirat(fd, name, 0o755); err != nil {
				return created, fmt.Errorf("creating mount target %s: %w", cur, err)
			}
			created = append(created, cur)
		default:
			return created, fmt.Errorf("mount target %s: %w", cur, err)
		}
		if last {
			break
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return created, fmt.Errorf("mount target %s: opening %s: %w", target, cur, err)
		}
		unix.Close(fd)
		fd = next
	}
	return created, nil
}

// RemoveCreatedPaths removes, last first, the mount targets Start created (State.CreatedPaths)
// that are still empty directories or empty files; anything else is left alone.
func RemoveCreatedPaths(paths []string) error {
	var first error
	for i := len(paths) - 1; i >= 0; i-- {
		fi, err := os.Lstat(paths[i])
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() && fi.Size() != 0 || !fi.Mode().IsRegular() && !fi.IsDir() {
			continue
		}
		if err := os.Remove(paths[i]); err != nil && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) && first == nil {
			first = err
		}
	}
	return first
}
