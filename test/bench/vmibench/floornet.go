package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/launcher/virt"
)

// A launcher's domain runs in its Pod's network namespace, where uid 107 may bind ports below
// 1024 (the Pod's net.ipv4.ip_unprivileged_port_start=0): QEMU's slirp forwards the VMI's
// ports from there. The floor gives each of its domains the same, so the very same domain XML
// (port 80 forwarded by each of them) starts ten times on one host. The namespace has nothing but
// loopback, so the floor's libvirtd fails the host name lookup it makes at every domain start at
// once (no route to a name server), where a Pod whose /etc/hosts names it would succeed at once.

// createNetns creates network namespace name with loopback up and unprivileged low ports.
func createNetns(name string) error {
	_ = deleteNetns(name)
	steps := [][]string{
		{"ip", "netns", "add", name},
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv4.ip_unprivileged_port_start=0"},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v: %s", s, err, out)
		}
	}
	return nil
}

func deleteNetns(name string) error {
	if _, err := os.Stat(filepath.Join("/run/netns", name)); err != nil {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns del %s: %v: %s", name, err, out)
	}
	return nil
}

// startDaemonIn starts a session libvirtd inside network namespace netns: from an OS thread
// that entered it, as a child process inherits its creating thread's namespaces. That thread
// stays (parked) until the daemon has exited, because libvirtd's parent-death signal
// (DaemonConfig's Pdeathsig) fires when the thread that started it ends.
func startDaemonIn(ctx context.Context, netns string, cfg virt.DaemonConfig) (*virt.Daemon, error) {
	type result struct {
		d   *virt.Daemon
		err error
	}
	res := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, changed, ends with this goroutine.
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/run/netns", netns))
		if err != nil {
			res <- result{err: err}
			return
		}
		err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		_ = f.Close()
		if err != nil {
			res <- result{err: fmt.Errorf("entering network namespace %s: %w", netns, err)}
			return
		}
		d, err := virt.StartDaemon(ctx, cfg)
		res <- result{d, err}
		if err == nil {
			<-d.Done()
		}
	}()
	r := <-res
	return r.d, r.err
}
