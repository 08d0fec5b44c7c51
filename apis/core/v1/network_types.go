package v1

// Interface is a network interface of the guest, connected to the network of the same name.
type Interface struct {
	// Name of the interface; must match the name of a network in spec.networks.
	Name string `json:"name"`
	// Model is the emulated NIC model the guest sees: virtio (the default), e1000, e1000e, igb,
	// ne2k_pci, pcnet or rtl8139.
	// +optional
	Model string `json:"model,omitempty"`
	// InterfaceBindingMethod chooses how the interface is connected to its network. Exactly one
	// binding must be set.
	InterfaceBindingMethod `json:",inline"`
	// Ports limits which ports are forwarded to the guest with the masquerade binding; all ports
	// are forwarded when empty. Server-side apply merges them by port and protocol.
	// +optional
	// +listType=map
	// +listMapKey=port
	// +listMapKey=protocol
	Ports []Port `json:"ports,omitempty"`
	// MacAddress is the MAC address of the interface, such as "de:ad:00:00:be:af" or
	// "DE-AD-00-00-BE-AF". Generated when empty. 02:00:00:00:00:00 is reserved for the
	// masquerade binding's in-pod bridge.
	// +optional
	MacAddress string `json:"macAddress,omitempty"`
	// BootOrder is this interface's place in the boot order (network boot); lower values boot
	// first. Values must be at least 1 and unique across disks and interfaces. Interfaces without
	// a boot order are not booted from.
	// +optional
	BootOrder *uint `json:"bootOrder,omitempty"`
}

// InterfaceBindingMethod is how a guest interface is connected to its network. Only one field may be set.
type InterfaceBindingMethod struct {
	// Bridge connects the guest directly to the pod network interface; the guest takes over the pod's
	// IP address. Not live-migratable on the pod network.
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty"`
	// Masquerade puts the guest behind NAT on a private network (spec.networks[].pod.vmNetworkCIDR),
	// reachable through the pod's IP address. Live-migratable.
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty"`
}

// InterfaceBridge selects the bridge binding; it has no settings.
type InterfaceBridge struct{}

// InterfaceMasquerade selects the masquerade (NAT) binding; it has no settings.
type InterfaceMasquerade struct{}

// Port is a port forwarded to the guest.
type Port struct {
	// Name of the port, unique within the interface; an IANA service name (at most 15 lowercase
	// letters, digits and '-', with at least one letter), such as "ssh".
	// +optional
	Name string `json:"name,omitempty"`
	// Protocol is TCP (the default) or UDP.
	// +optional
	// +default="TCP"
	Protocol string `json:"protocol,omitempty"`
	// Port number to forward, from 1 to 65535.
	Port int32 `json:"port"`
}

// Network is a network that guest interfaces can be connected to.
type Network struct {
	// Name of the network, referred to by spec.domain.devices.interfaces[].name.
	Name string `json:"name"`
	// NetworkSource is where the network comes from. Exactly one source must be set.
	NetworkSource `json:",inline"`
}

// NetworkSource is where a network comes from. Only one field may be set.
type NetworkSource struct {
	// Pod is the launcher pod's own network, the default network of the cluster.
	// +optional
	Pod *PodNetwork `json:"pod,omitempty"`
}

// PodNetwork is the cluster's pod network, as seen by the launcher pod.
type PodNetwork struct {
	// VMNetworkCIDR is the private IPv4 network the guest lives on with the masquerade binding.
	// Defaults to 10.0.2.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty"`
}
