package podnet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` bind-mounts named network namespaces.
const netnsDir = "/run/netns"

// maxNetnsName is the longest name `ip netns` accepts (a file name, NAME_MAX-1).
const maxNetnsName = 254

// isNetns reports whether path is a mounted network namespace, not a stale file left
// behind by an interrupted `ip netns add`.
func isNetns(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC
}

// addNetns creates the named network namespace, replacing a stale file of that name.
func addNetns(ctx context.Context, name string) error {
	path := filepath.Join(netnsDir, name)
	if isNetns(path) {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		if err := deleteNetns(ctx, name); err != nil {
			return err
		}
	}
	return runIP(ctx, "netns", "add", name)
}

// deleteNetns removes the named network namespace; a missing one is not an error.
func deleteNetns(ctx context.Context, name string) error {
	if _, err := os.Lstat(filepath.Join(netnsDir, name)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return runIP(ctx, "netns", "delete", name)
}

// listNetns returns the names of the namespaces under /run/netns that start with prefix.
func listNetns(prefix string) ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing network namespaces: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func runIP(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inNetns runs fn on an OS thread that has entered the network namespace at path, so that
// /proc/sys/net and new sockets are that namespace's. The thread is discarded if it cannot
// return to its own namespace.
func inNetns(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer own.Close()
		target, err := os.Open(path)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("opening network namespace: %w", err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", path, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			// Still locked: the runtime ends the thread with this goroutine.
			errc <- fmt.Errorf("returning from network namespace %s: %w", path, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// setSysctl writes a sysctl (dotted name) inside the network namespace at path.
func setSysctl(path, name, value string) error {
	file := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
	return inNetns(path, func() error {
		if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
			return fmt.Errorf("setting %s=%s in %s: %w", name, value, path, err)
		}
		return nil
	})
}

// safeSysctls are the network sysctls Kubernetes counts as safe (namespaced, and harmless to
// other Pods): a kubelet sets them for any Pod that asks; vireo-local nodes set these only.
var safeSysctls = map[string]bool{
	"net.ipv4.ip_local_port_range":        true,
	"net.ipv4.ip_local_reserved_ports":    true,
	"net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.ping_group_range":           true,
	"net.ipv4.tcp_syncookies":             true,
	"net.ipv4.tcp_keepalive_time":         true,
	"net.ipv4.tcp_fin_timeout":            true,
	"net.ipv4.tcp_keepalive_intvl":        true,
	"net.ipv4.tcp_keepalive_probes":       true,
}

// SetSysctls sets a Pod's sysctls (securityContext.sysctls) in its network namespace. Only
// Kubernetes' safe network sysctls are allowed; any other is an error naming it.
func SetSysctls(att Attachment, sysctls map[string]string) error {
	for name := range sysctls {
		if !safeSysctls[strings.ReplaceAll(name, "/", ".")] {
			return fmt.Errorf("sysctl %s is not one of Kubernetes' safe network sysctls, the only ones vireo-local nodes set", name)
		}
	}
	for name, value := range sysctls {
		if err := setSysctl(att.NetnsPath, strings.ReplaceAll(name, "/", "."), value); err != nil {
			return err
		}
	}
	return nil
}
