// Package netnssetup sets up the masquerade binding (package podnetwork) in a network
// namespace: the bridge with the gateway address, the tap device, IPv4 forwarding and the NAT
// rules. It needs CAP_NET_ADMIN, and CAP_SYS_ADMIN to enter the namespace: the node's network
// helper runs it, and the benchmark floor that stands for launchers.
package netnssetup

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/internal/podnetwork"
)

// Apply sets up the network namespace ns for req. tun is an unattached /dev/net/tun
// descriptor opened in that namespace (by its launcher), used to create the tap device; nil
// when the device exists. It is idempotent: a second call for the same namespace changes
// nothing but the rules, which it replaces at once.
func Apply(ns, tun *os.File, req *podnetwork.Request) error {
	return inNamespace(ns, func() error { return apply(req, tun) })
}

// inNamespace runs fn on an OS thread that has entered the network namespace nsFile. The
// thread is never handed back to the Go scheduler: it ends with the goroutine.
func inNamespace(nsFile *os.File, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Deliberately no UnlockOSThread: the thread is in another namespace.
		if err := checkNetNamespace(nsFile); err != nil {
			errc <- err
			return
		}
		if err := netns.Set(netns.NsHandle(nsFile.Fd())); err != nil {
			errc <- fmt.Errorf("entering the launcher's network namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// ownNamespace identifies the process's own network namespace, noted at start, before any
// of its threads entered another (a locked thread that ends on the main thread stays in the
// namespace it entered).
var ownNamespace = func() (st unix.Stat_t) {
	_ = unix.Stat("/proc/thread-self/ns/net", &st)
	return st
}()

// checkNetNamespace refuses a descriptor that is not a network namespace, or is the helper's
// own (a launcher could only send its own, but the helper does not rely on it).
func checkNetNamespace(f *os.File) error {
	// NS_GET_NSTYPE answers with the ioctl's return value.
	typ, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(unix.NS_GET_NSTYPE), 0)
	if errno != 0 || typ != unix.CLONE_NEWNET {
		return errors.New("the launcher sent a descriptor that is not a network namespace")
	}
	var theirs unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &theirs); err != nil {
		return err
	}
	if theirs.Ino == ownNamespace.Ino && theirs.Dev == ownNamespace.Dev {
		return errors.New("the launcher sent the helper's own network namespace, not its Pod's")
	}
	return nil
}

// apply sets up the namespace the calling thread is in (see Apply).
func apply(req *podnetwork.Request, tun *os.File) error {
	layout, err := podnetwork.ParseLayout(req.CIDR)
	if err != nil {
		return fmt.Errorf("vmNetworkCIDR %q: %w", req.CIDR, err)
	}
	eth, err := netlink.LinkByName(podnetwork.PodInterface)
	if err != nil {
		return fmt.Errorf("the Pod has no interface %s: %w", podnetwork.PodInterface, err)
	}
	mtu := eth.Attrs().MTU
	bridge, err := ensureBridge(layout, mtu)
	if err != nil {
		return err
	}
	if err := ensureTap(tun, req.TapOwner, bridge, mtu); err != nil {
		return err
	}
	for _, link := range []netlink.Link{eth, bridge} {
		if err := enableForwarding(link); err != nil {
			return fmt.Errorf("enabling IPv4 forwarding on %s: %w", link.Attrs().Name, err)
		}
	}
	return applyRules(req, layout)
}

// ensureBridge creates the bridge with the gateway address unless it exists, and brings it up.
func ensureBridge(layout podnetwork.Layout, mtu int) (netlink.Link, error) {
	link, err := netlink.LinkByName(podnetwork.Bridge)
	if err != nil {
		mac, _ := net.ParseMAC(podnetwork.BridgeMAC)
		attrs := netlink.NewLinkAttrs()
		attrs.Name, attrs.MTU, attrs.HardwareAddr = podnetwork.Bridge, mtu, mac
		if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("creating bridge %s: %w", podnetwork.Bridge, err)
		}
		if link, err = netlink.LinkByName(podnetwork.Bridge); err != nil {
			return nil, err
		}
	}
	gw := layout.GatewayPrefix()
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: gw.Addr().AsSlice(), Mask: net.CIDRMask(gw.Bits(), 32)}}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return nil, fmt.Errorf("giving %s the address %s: %w", podnetwork.Bridge, gw, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, fmt.Errorf("bringing %s up: %w", podnetwork.Bridge, err)
	}
	return link, nil
}

// ensureTap creates the persistent tap device through tun (it is created in the namespace tun
// was opened in), owned by owner so that the launcher's libvirt opens it unprivileged, and puts
// it on the bridge.
func ensureTap(tun *os.File, owner int, bridge netlink.Link, mtu int) error {
	if _, err := netlink.LinkByName(podnetwork.Tap); err != nil {
		if tun == nil {
			return errors.New("the launcher sent no /dev/net/tun descriptor to create the tap device with")
		}
		if err := createTap(int(tun.Fd()), owner); err != nil {
			return fmt.Errorf("creating tap device %s: %w", podnetwork.Tap, err)
		}
	}
	tap, err := netlink.LinkByName(podnetwork.Tap)
	if err != nil {
		return err
	}
	if tap.Attrs().MTU != mtu {
		if err := netlink.LinkSetMTU(tap, mtu); err != nil {
			return fmt.Errorf("setting the MTU of %s: %w", podnetwork.Tap, err)
		}
	}
	if err := netlink.LinkSetMaster(tap, bridge); err != nil {
		return fmt.Errorf("putting %s on %s: %w", podnetwork.Tap, podnetwork.Bridge, err)
	}
	if err := netlink.LinkSetUp(tap); err != nil {
		return fmt.Errorf("bringing %s up: %w", podnetwork.Tap, err)
	}
	return nil
}

func createTap(fd, owner int) error {
	ifr, err := unix.NewIfreq(podnetwork.Tap)
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		return fmt.Errorf("TUNSETIFF: %w", err)
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETOWNER, owner); err != nil {
		return fmt.Errorf("TUNSETOWNER: %w", err)
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETGROUP, owner); err != nil {
		return fmt.Errorf("TUNSETGROUP: %w", err)
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETPERSIST, 1); err != nil {
		return fmt.Errorf("TUNSETPERSIST: %w", err)
	}
	return nil
}

// ipv4DevconfForwarding is IPV4_DEVCONF_FORWARDING of linux/ip.h.
const ipv4DevconfForwarding = 1

// enableForwarding turns on IPv4 forwarding for packets arriving on link. A namespace's
// /proc/sys is read-only in a container, so it goes through rtnetlink (IFLA_INET_CONF), which
// sets the same per-interface switch as net.ipv4.conf.<link>.forwarding.
func enableForwarding(link netlink.Link) error {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(link.Attrs().Index)
	req.AddData(msg)
	spec := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
	inet := spec.AddRtAttr(unix.AF_INET, nil)
	conf := inet.AddRtAttr(unix.IFLA_INET_CONF, nil)
	conf.AddRtAttr(ipv4DevconfForwarding, nl.Uint32Attr(1))
	req.AddData(spec)
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}
