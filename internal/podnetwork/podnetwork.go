// Package podnetwork is the contract of the masquerade binding inside a launcher Pod's network
// namespace, shared by the launcher (which serves the guest DHCP and connects QEMU to the tap
// device) and the node agent's network helper (which creates the devices and the NAT rules).
//
// The layout is KubeVirt's: a bridge k6t-eth0 carrying the gateway address (.1 of the VMI's
// vmNetworkCIDR, 10.0.2.0/24 by default) with the tap device tap0 on it, owned by the
// launcher's user so that libvirt opens it without privilege; the guest is .2. Inbound TCP and
// UDP on the Pod's eth0 is translated to the guest (every port when the interface lists none,
// the listed ones otherwise), the guest's outbound traffic is masqueraded behind the Pod's
// address, and nothing else arriving on eth0 reaches a socket of the Pod itself.
package podnetwork

import (
	"fmt"
	"net/netip"
	"strings"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	// PodInterface is the Pod's own interface, which the CNI plugin creates.
	PodInterface = "eth0"
	// Bridge is the in-Pod bridge that carries the guest network's gateway address.
	Bridge = "k6t-eth0"
	// Tap is the tap device QEMU's NIC is connected to.
	Tap = "tap0"
	// BridgeMAC is the bridge's address, which KubeVirt reserves for it.
	BridgeMAC = "02:00:00:00:00:00"
	// DefaultCIDR is the guest network when the VMI's pod network sets no vmNetworkCIDR.
	DefaultCIDR = "10.0.2.0/24"
	// MaxPrefix is the longest prefix a guest network may have: it needs a gateway (.1) and
	// the guest (.2) besides the network and broadcast addresses.
	MaxPrefix = 29
	// Version is the version of Request that the helper understands.
	Version = 1
)

// Layout is the guest network's addresses.
type Layout struct {
	// Network is the guest network, such as 10.0.2.0/24.
	Network netip.Prefix
	// Gateway is the bridge's address and the guest's router (.1).
	Gateway netip.Addr
	// Guest is the address the guest is leased (.2).
	Guest netip.Addr
}

// GatewayPrefix is the gateway's address with the network's prefix length, as the bridge
// carries it.
func (l Layout) GatewayPrefix() netip.Prefix { return netip.PrefixFrom(l.Gateway, l.Network.Bits()) }

// ParseLayout returns the layout of the guest network cidr ("" for DefaultCIDR).
func ParseLayout(cidr string) (Layout, error) {
	if cidr == "" {
		cidr = DefaultCIDR
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !prefix.Addr().Is4() || prefix.Bits() > MaxPrefix {
		return Layout{}, fmt.Errorf("must be an IPv4 network in CIDR notation with a prefix of at most /%d, such as %s", MaxPrefix, DefaultCIDR)
	}
	network := prefix.Masked()
	gateway := network.Addr().Next()
	return Layout{Network: network, Gateway: gateway, Guest: gateway.Next()}, nil
}

// Port is a port forwarded to the guest.
type Port struct {
	// Protocol is "tcp" or "udp".
	Protocol string `json:"protocol"`
	Port     uint16 `json:"port"`
}

// Request is what the node agent asks its network helper to set up in a launcher Pod's
// network namespace.
type Request struct {
	Version int `json:"version"`
	// CIDR is the guest network (vmNetworkCIDR).
	CIDR string `json:"cidr"`
	// AllPorts forwards every TCP and UDP port; otherwise only Ports.
	AllPorts bool   `json:"allPorts"`
	Ports    []Port `json:"ports,omitempty"`
	// TapOwner is the user and group that own the tap device: the launcher's.
	TapOwner int `json:"tapOwner"`
}

// Reply is the helper's answer: empty Error when the namespace is set up.
type Reply struct {
	Error string `json:"error,omitempty"`
}

// ForVMI returns the request for vmi's masquerade interface, or nil when it has no interface
// on the pod network with the masquerade binding (the guest then has no network).
func ForVMI(vmi *v1.VirtualMachineInstance, tapOwner int) (*Request, error) {
	ifaces := vmi.Spec.Domain.Devices.Interfaces
	if len(ifaces) == 0 || ifaces[0].Masquerade == nil {
		return nil, nil
	}
	iface := &ifaces[0]
	var cidr string
	found := false
	for _, n := range vmi.Spec.Networks {
		if n.Name == iface.Name && n.Pod != nil {
			cidr, found = n.Pod.VMNetworkCIDR, true
		}
	}
	if !found {
		return nil, nil
	}
	if _, err := ParseLayout(cidr); err != nil {
		return nil, fmt.Errorf("spec.networks[].pod.vmNetworkCIDR %q: %w", cidr, err)
	}
	req := &Request{Version: Version, CIDR: cidr, AllPorts: len(iface.Ports) == 0, TapOwner: tapOwner}
	for i, p := range iface.Ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" || p.Port < 1 || p.Port > 65535 {
			return nil, fmt.Errorf("spec.domain.devices.interfaces[0].ports[%d]: %s port %d cannot be forwarded (TCP or UDP, 1 to 65535)", i, p.Protocol, p.Port)
		}
		req.Ports = append(req.Ports, Port{Protocol: proto, Port: uint16(p.Port)})
	}
	return req, nil
}
