package localcluster

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
)

// Network is the installation's private network: a bridge in the host namespace carrying
// HostIP, and one network namespace per local node attached to it by a veth pair
// (NodeAddress); the Pods' networks are routed through their nodes. EndpointSlices refuse
// loopback addresses, and test traffic must not reach the machine's own addresses, so every
// component that others connect to listens on an address of this network.
type Network struct {
	// Netns prefixes every name: the bridge, the nodes and their namespaces. Earlier versions
	// ran vireo-apiserver in a namespace of this very name; Delete removes it.
	Netns string
	// HostIP is the bridge's address; kube-apiserver listens there (and only there).
	HostIP net.IP
	// PrefixLen is the bridge subnet's prefix length.
	PrefixLen int
	// ClusterCIDR is the Pod network that kube-controller-manager divides among the nodes
	// (a /24 each). Host routes are shared by every installation, so each needs its own.
	ClusterCIDR string
}

// DefaultNetwork is 10.250.0.0/24 on bridge vireo-local0, Pods in 10.244.0.0/16.
func DefaultNetwork() Network {
	return Network{Netns: "vireo-local", HostIP: net.IPv4(10, 250, 0, 1), PrefixLen: 24, ClusterCIDR: "10.244.0.0/16"}
}

// Bridge is the host bridge's name (at most 15 bytes).
func (n Network) Bridge() string { return truncate(n.Netns, 14) + "0" }

// NodeName is the name of local node i: its Node object, network namespace and directory.
func (n Network) NodeName(i int) string { return n.Netns + "-" + strconv.Itoa(i) }

// NodeAddress is local node i's InternalIP: .10, .11, ... of the bridge subnet.
func (n Network) NodeAddress(i int) net.IP {
	ip := n.HostIP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], byte(10+i))
}

// nodeVeth is the host end of node i's veth pair (at most 15 bytes).
func (n Network) nodeVeth(i int) string {
	return truncate(n.Netns, 10) + "-" + strconv.Itoa(i) + "h"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Ensure creates the bridge unless it exists. An installation of an earlier version had
// HostIP on a veth to vireo-apiserver's namespace: that namespace (and with it the veth) is
// deleted first, freeing the address.
func (n Network) Ensure() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("the ip command (Debian package iproute2) is needed to create the bridge %s: %w", n.Bridge(), err)
	}
	if netnsExists(n.Netns) {
		if err := run("ip", "netns", "del", n.Netns); err != nil {
			return err
		}
	}
	return n.ensureBridge()
}

func (n Network) ensureBridge() error {
	br := n.Bridge()
	if run("ip", "link", "show", br) == nil {
		return nil
	}
	steps := [][]string{
		{"ip", "link", "add", br, "type", "bridge"},
		{"ip", "addr", "add", n.cidr(n.HostIP), "dev", br},
		{"ip", "link", "set", br, "up"},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return fmt.Errorf("setting up bridge %s: %w", br, err)
		}
	}
	return nil
}

// attach creates namespace ns (unless it exists) with a veth to the bridge carrying ip,
// loopback up and a default route via HostIP; packets it forwards (for its Pods) leave
// through the same link. The namespace's end is created under a name unique on the host and
// renamed to nsVeth once inside.
func (n Network) attach(ns, hostVeth, nsVeth string, ip net.IP) error {
	if !netnsExists(ns) {
		if err := run("ip", "netns", "add", ns); err != nil {
			return err
		}
	}
	var steps [][]string
	if run("ip", "link", "show", hostVeth) != nil {
		peer := hostVeth[:len(hostVeth)-1] + "p"
		steps = append(steps,
			[]string{"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", peer},
			[]string{"ip", "link", "set", peer, "netns", ns},
			[]string{"ip", "-n", ns, "link", "set", peer, "name", nsVeth},
			[]string{"ip", "-n", ns, "addr", "add", n.cidr(ip), "dev", nsVeth},
		)
	}
	steps = append(steps,
		[]string{"ip", "link", "set", hostVeth, "master", n.Bridge()},
		[]string{"ip", "link", "set", hostVeth, "up"},
		[]string{"ip", "-n", ns, "link", "set", nsVeth, "up"},
		[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
		[]string{"ip", "-n", ns, "route", "replace", "default", "via", n.HostIP.String()},
	)
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return fmt.Errorf("setting up network namespace %s: %w", ns, err)
		}
	}
	return nil
}

// EnsureNode creates local node i's namespace, attached to the bridge at NodeAddress(i),
// forwarding for its Pods (IPv4 forwarding is per namespace; the host's stays as it is).
func (n Network) EnsureNode(i int) error {
	ns := n.NodeName(i)
	if err := n.attach(ns, n.nodeVeth(i), "eth0", n.NodeAddress(i)); err != nil {
		return err
	}
	if err := run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"); err != nil {
		return fmt.Errorf("node %s: %w", ns, err)
	}
	// Bridged Pod-to-Pod replies must pass kube-proxy's conntrack (a Service whose endpoint
	// is on the same bridge); the setting exists only where br_netfilter is loaded.
	_ = run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=1")
	return nil
}

// RoutePodCIDR sends traffic for a node's Pod CIDR to that node: from the host and from
// every other node's namespace (nodes share the bridge, so no host forwarding is needed).
func (n Network) RoutePodCIDR(nodes, i int, podCIDR string) error {
	via := n.NodeAddress(i).String()
	if err := run("ip", "route", "replace", podCIDR, "via", via); err != nil {
		return err
	}
	for j := 0; j < nodes; j++ {
		if j == i {
			continue
		}
		if err := run("ip", "-n", n.NodeName(j), "route", "replace", podCIDR, "via", via); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNode removes local node i's namespace and with it its veth pair (its Pods' network
// namespaces live in the node's own mount namespace and go with its containers).
func (n Network) DeleteNode(i int) error {
	if !netnsExists(n.NodeName(i)) {
		return nil
	}
	return run("ip", "netns", "del", n.NodeName(i))
}

// Delete removes the bridge, and the namespace of earlier versions' vireo-apiserver (node
// namespaces go with DeleteNode); routes through the bridge go with it.
func (n Network) Delete() error {
	if netnsExists(n.Netns) {
		if err := run("ip", "netns", "del", n.Netns); err != nil {
			return err
		}
	}
	if run("ip", "link", "show", n.Bridge()) == nil {
		return run("ip", "link", "del", n.Bridge())
	}
	return nil
}

func netnsExists(name string) bool {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
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
