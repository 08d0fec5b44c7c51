package localcluster

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// Network is the private link between the host and the network namespace the Vireo
// components run in. EndpointSlices refuse loopback addresses, so the aggregator must
// reach vireo-apiserver at a real address; a namespace of our own provides one without
// touching the machine's own interfaces.
type Network struct {
	// Netns is the namespace's name (ip netns).
	Netns string
	// HostIP is the host end of the veth pair; kube-apiserver listens there (and only
	// there) and advertises it.
	HostIP net.IP
	// NodeIP is the namespace end; vireo-apiserver listens there.
	NodeIP net.IP
	// PrefixLen is the link's prefix length.
	PrefixLen int
}

// DefaultNetwork is 10.250.0.0/24 in namespace vireo-local.
func DefaultNetwork() Network {
	return Network{Netns: "vireo-local", HostIP: net.IPv4(10, 250, 0, 1), NodeIP: net.IPv4(10, 250, 0, 2), PrefixLen: 24}
}

// veth names derive from the namespace's name (at most 15 bytes each).
func (n Network) hostVeth() string { return truncate(n.Netns, 13) + "-h" }
func (n Network) nsVeth() string   { return truncate(n.Netns, 13) + "-n" }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Ensure creates the namespace and the veth pair unless they exist.
func (n Network) Ensure() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("the ip command (Debian package iproute2) is needed to create network namespace %s: %w", n.Netns, err)
	}
	if !n.exists() {
		if err := run("ip", "netns", "add", n.Netns); err != nil {
			return err
		}
	}
	hostVeth, nsVeth := n.hostVeth(), n.nsVeth()
	if run("ip", "link", "show", hostVeth) != nil {
		steps := [][]string{
			{"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", nsVeth},
			{"ip", "link", "set", nsVeth, "netns", n.Netns},
			{"ip", "addr", "add", n.cidr(n.HostIP), "dev", hostVeth},
			{"ip", "link", "set", hostVeth, "up"},
			{"ip", "netns", "exec", n.Netns, "ip", "addr", "add", n.cidr(n.NodeIP), "dev", nsVeth},
			{"ip", "netns", "exec", n.Netns, "ip", "link", "set", nsVeth, "up"},
			{"ip", "netns", "exec", n.Netns, "ip", "link", "set", "lo", "up"},
		}
		for _, s := range steps {
			if err := run(s[0], s[1:]...); err != nil {
				return fmt.Errorf("setting up network namespace %s: %w", n.Netns, err)
			}
		}
	}
	return nil
}

// Delete removes the namespace and with it the veth pair.
func (n Network) Delete() error {
	if !n.exists() {
		return nil
	}
	return run("ip", "netns", "del", n.Netns)
}

func (n Network) exists() bool {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == n.Netns {
			return true
		}
	}
	return false
}

func (n Network) cidr(ip net.IP) string { return fmt.Sprintf("%s/%d", ip, n.PrefixLen) }

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
