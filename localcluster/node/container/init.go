package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startPipeFD is the descriptor of the start pipe in node-init when the shim runs it: node-init
// marks it close-on-exec, so it closes unread once the binary runs, and writes to it the error
// that prevented the exec otherwise.
const startPipeFD = 3

// Exit codes of node-init when the binary does not run.
const (
	exitSetupFailed = 128 // a mount, namespace or credential could not be set up
	exitCannotExec  = 126 // the binary exists but cannot be executed
	exitNotFound    = 127 // no such binary
)

// defaultPath is used to find a binary named without a slash when Env has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// InitMain is `vireo-local-shim node-init FILE` (by the shim, as the container's process, already in
// its own mount and UTS namespaces) and `vireo-local-shim node-init --exec FILE` (by Exec, through
// nsenter, already in the container's namespaces): it sets up the process as FILE says and execs
// the container's binary. On failure it prints the error to stderr and exits 127 for a missing
// binary, 126 for one that cannot be executed and 128 for anything else.
func InitMain(args []string) int {
	// Every system call below runs on this thread, which is also the one that execs: entering the
	// network namespace (setns affects only the calling thread) and mounting the namespace's sysfs
	// hold for the binary because execve keeps the calling thread's namespaces. Doing it here
	// rather than in the shim keeps the shim itself in the host's namespace and confines the
	// per-thread state to a process that is about to exec. TestNetnsAndHostname proves it (it
	// fails, listing the host's interfaces, when the setns below is removed).
	runtime.LockOSThread()
	execMode := len(args) == 2 && args[0] == "--exec"
	if execMode {
		args = args[1:]
	}
	var startPipe *os.File
	if !execMode {
		// Set before anything can fail, so the shim always hears why.
		syscall.CloseOnExec(startPipeFD)
		startPipe = os.NewFile(startPipeFD, "start-pipe")
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(os.Stderr, "vireo-local-shim node-init: %v\n", err)
		if startPipe != nil {
			_, _ = startPipe.WriteString(err.Error())
		}
		return code
	}
	if len(args) != 1 {
		return fail(2, errors.New("usage: vireo-local-shim node-init [--exec] FILE"))
	}
	var cfg initConfig
	if ok, err := readJSON(args[0], &cfg); err != nil || !ok {
		return fail(exitSetupFailed, fmt.Errorf("reading %s: %v", args[0], err))
	}
	spec := cfg.Spec
	binary, err := -1, error(nil)
	if !execMode && filepath.IsAbs(spec.Path) {
		// Opened before the mounts, which may cover the binary's own path (a volume at /work
		// hides /work/...): the process execs it through this descriptor.
		if binary, err = unix.Open(spec.Path, unix.O_PATH, 0); err != nil {
			return fail(exitNotFound, fmt.Errorf("exec %s: %w", spec.Path, err))
		}
	}
	for _, fd := range cfg.CgroupProcsFDs {
		// Exec: the command joins the container's cgroup (and so its limits) before it runs.
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fail(exitSetupFailed, fmt.Errorf("joining the container's cgroup: %w", err))
		}
		unix.Close(fd)
	}
	if !execMode {
		// Before the namespaces: in a Pod's network namespace /sys is that namespace's sysfs,
		// without the cgroup file systems. (Exec moves its command into the cgroup itself.)
		if err := enterCgroups(spec.Resources); err != nil {
			return fail(exitSetupFailed, err)
		}
		if err := setupNamespaces(spec); err != nil {
			return fail(exitSetupFailed, err)
		}
	}
	if err := setCredentials(spec); err != nil {
		return fail(exitSetupFailed, err)
	}
	wd := spec.WorkingDir
	if wd == "" {
		wd = "/"
	}
	if err := os.Chdir(wd); err != nil {
		return fail(exitSetupFailed, fmt.Errorf("changing to the working directory: %w", err))
	}
	path := fmt.Sprintf("/proc/self/fd/%d", binary)
	if binary < 0 {
		if path, err = lookPath(spec.Path, spec.Env); err != nil {
			return fail(exitNotFound, err)
		}
	}
	resetIgnoredSignals()
	err = syscall.Exec(path, append([]string{spec.Path}, spec.Args...), spec.Env)
	code := exitCannotExec
	if errors.Is(err, syscall.ENOENT) {
		code = exitNotFound
	}
	return fail(code, fmt.Errorf("exec %s: %w", path, err))
}

// setupNamespaces enters the network namespace, makes the bind mounts and sets the hostname.
func setupNamespaces(spec Spec) error {
	if spec.Netns != "" {
		if err := enterNetns(spec.Netns); err != nil {
			return err
		}
	}
	// Every source is cloned before anything is mounted: a mount may cover the path of a
	// later source (a volume at /work hides the node's directory under /work).
	trees := make([]int, len(spec.Mounts))
	for i, m := range spec.Mounts {
		tree, err := cloneTree(m)
		if err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.Source, m.Target, err)
		}
		defer unix.Close(tree)
		trees[i] = tree
	}
	for i, m := range spec.Mounts {
		if err := attachTree(trees[i], m); err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.Source, m.Target, err)
		}
	}
	if spec.Hostname != "" {
		if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
			return fmt.Errorf("setting hostname %q: %w", spec.Hostname, err)
		}
	}
	return nil
}

// enterNetns moves this thread into the network namespace at path and, as `ip netns exec` does,
// replaces /sys (in the container's own mount namespace) with the namespace's sysfs, so that
// /sys/class/net lists its interfaces.
func enterNetns(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering network namespace %s: %w", path, err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmounting /sys for network namespace %s: %w", path, err)
	}
	if err := unix.Mount(filepath.Base(path), "/sys", "sysfs", 0, ""); err != nil {
		return fmt.Errorf("mounting the sysfs of network namespace %s: %w", path, err)
	}
	return nil
}

// cloneTree clones the tree at m.Source (recursively, read-only throughout when asked), for
// attachTree to attach at m.Target, opened with RESOLVE_NO_SYMLINKS: a symlink in the target,
// even one planted after Start checked it, fails the mount instead of redirecting it. A target
// missing in this namespace (under an earlier mount) is created the way Start creates them.
func cloneTree(m Mount) (int, error) {
	src, err := openSource(m)
	if err != nil {
		return -1, err
	}
	defer unix.Close(src)
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return -1, fmt.Errorf("cloning the source: %w", err)
	}
	if m.ReadOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			unix.Close(tree)
			return -1, fmt.Errorf("making the mount read-only: %w", err)
		}
	}
	return tree, nil
}

// openSource opens a mount's source as an O_PATH descriptor: the trusted path as it is, or
// the untrusted part below Beneath with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS.
func openSource(m Mount) (int, error) {
	if m.Beneath == "" {
		fd, err := unix.Open(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("opening the source: %w", err)
		}
		return fd, nil
	}
	rel, err := filepath.Rel(m.Beneath, m.Source)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, fmt.Errorf("source %s is not inside %s", m.Source, m.Beneath)
	}
	root, err := unix.Open(m.Beneath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", m.Beneath, err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return -1, fmt.Errorf("opening %s below %s without following symlinks: %w", rel, m.Beneath, err)
	}
	return fd, nil
}

// attachTree attaches a cloned tree at m.Target (see cloneTree).
func attachTree(tree int, m Mount) error {
	var st unix.Stat_t
	if err := unix.Fstat(tree, &st); err != nil {
		return err
	}
	if _, err := createTarget(m.Target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	target, err := unix.Openat2(unix.AT_FDCWD, m.Target, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if err != nil {
		return fmt.Errorf("opening the target without following symlinks: %w", err)
	}
	defer unix.Close(target)
	return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// setCredentials sets no_new_privs when asked, and the groups, group and user when the spec
// names any.
func setCredentials(spec Spec) error {
	if spec.NoNewPrivileges {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
	}
	if spec.UID == nil && spec.GID == nil && len(spec.SupplementalGroups) == 0 {
		return nil
	}
	groups := make([]int, len(spec.SupplementalGroups))
	for i, g := range spec.SupplementalGroups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setting supplemental groups %v: %w", groups, err)
	}
	if spec.GID != nil {
		if err := syscall.Setgid(int(*spec.GID)); err != nil {
			return fmt.Errorf("setting group %d: %w", *spec.GID, err)
		}
	}
	if spec.UID != nil {
		if err := syscall.Setuid(int(*spec.UID)); err != nil {
			return fmt.Errorf("setting user %d: %w", *spec.UID, err)
		}
	}
	return nil
}

// lookPath finds a binary named without a slash in the PATH of env, as a container runtime does.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec %s: executable file not found in $PATH (%s)", name, path)
}

// kernelSigaction is the kernel's struct sigaction on amd64 and arm64 (handler, flags, restorer,
// mask); only the handler is read or set here.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// resetIgnoredSignals sets every ignored signal back to its default action, as container runtimes
// do: an ignored disposition survives execve, and the shim ignores SIGTERM, SIGINT and SIGHUP (and
// the node may have inherited more, e.g. SIGINT and SIGQUIT in a background job), which the
// container must not. Handlers the Go runtime installed are reset by execve itself.
func resetIgnoredSignals() {
	const sigIgn, sigDfl = 1, 0
	for sig := 1; sig <= 64; sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) {
			continue
		}
		var old kernelSigaction
		_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if e != 0 || old.handler != sigIgn {
			continue
		}
		dfl := kernelSigaction{handler: sigDfl}
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	}
}
