package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/internal/podnetwork/netnssetup"
	"github.com/vireo-dev/vireo/internal/testsupport"
	"github.com/vireo-dev/vireo/launcher/dhcp"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// A launcher's domain runs in its Pod's network namespace, which the node's network helper set
// up for the masquerade binding (a bridge with the gateway, the tap device QEMU's NIC uses, NAT
// rules) and where the launcher serves the guest DHCP. The floor gives each of its domains the
// same (one end of a veth pair stands for the CNI's eth0: this kernel has no dummy links), so
// the very same domain XML starts ten times on one host and its guests boot as they do in Pods.
// The namespace has no route out, so the floor's libvirtd fails the host name lookup it makes
// at every domain start at once (no route to a name server), where a Pod whose /etc/hosts
// names it would succeed at once.

// floorDHCP stops the DHCP server of each floor namespace, by name.
var floorDHCP = struct {
	sync.Mutex
	stop map[string]context.CancelFunc
}{stop: map[string]context.CancelFunc{}}

// createNetns creates network namespace name as a launcher Pod's for vmi.
func createNetns(ctx context.Context, name string, vmi *v1.VirtualMachineInstance) error {
	_ = deleteNetns(name)
	steps := [][]string{
		{"ip", "netns", "add", name},
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "-n", name, "link", "add", podnetwork.PodInterface, "type", "veth", "peer", "name", "eth0-peer"},
		{"ip", "-n", name, "link", "set", podnetwork.PodInterface, "up"},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v: %s", s, err, out)
		}
	}
	req, err := podnetwork.ForVMI(vmi, launcherUID)
	if err != nil || req == nil {
		return err
	}
	ns, err := os.Open(filepath.Join("/run/netns", name))
	if err != nil {
		return err
	}
	defer ns.Close()
	var tun *os.File
	if err := testsupport.InNetns(name, func() error {
		tun, err = os.OpenFile(podnetwork.TunDevice, os.O_RDWR, 0)
		return err
	}); err != nil {
		return err
	}
	defer tun.Close()
	if err := netnssetup.Apply(ns, tun, req); err != nil {
		return fmt.Errorf("setting up %s as a launcher Pod's network: %w", name, err)
	}
	return serveFloorDHCP(ctx, name, req)
}

// serveFloorDHCP serves the guest DHCP in namespace name, as the launcher does, until
// deleteNetns(name) or ctx ends.
func serveFloorDHCP(ctx context.Context, name string, req *podnetwork.Request) error {
	layout, err := podnetwork.ParseLayout(req.CIDR)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	floorDHCP.Lock()
	floorDHCP.stop[name] = cancel
	floorDHCP.Unlock()
	lease := dhcp.Lease{Guest: layout.Guest, Gateway: layout.Gateway, PrefixLen: layout.Network.Bits(), MTU: 1500}
	go func() {
		// The server's socket is made in the namespace; the thread ends with the server.
		_ = testsupport.InNetns(name, func() error { return dhcp.Serve(ctx, podnetwork.Bridge, lease) })
	}()
	return nil
}

func deleteNetns(name string) error {
	floorDHCP.Lock()
	if stop := floorDHCP.stop[name]; stop != nil {
		stop()
		delete(floorDHCP.stop, name)
	}
	floorDHCP.Unlock()
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
