package v1

// Interface is a network interface of the guest, connected to the network of the same name.
type Interface struct {
	// Name of the interface; must match the name of a network in spec.networks.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Model is the emulated NIC model the guest sees: virtio (the default), e1000, e1000e, igb,
	// ne2k_pci, pcnet or rtl8139.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
	// InterfaceBindingMethod chooses how the interface is connected to its network. Exactly one
	// binding must be set.
	InterfaceBindingMethod `json:",inline" protobuf:"bytes,3,opt,name=interfaceBindingMethod"`
	// Ports limits which ports are forwarded to the guest with the masquerade binding; all ports
	// are forwarded when empty. Server-side apply merges them by port and protocol.
	// +optional
	// +listType=map
	// +listMapKey=port
	// +listMapKey=protocol
	Ports []Port `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
	// MacAddress is the MAC address of the interface, such as "de:ad:00:00:be:af" or
	// "DE-AD-00-00-BE-AF". Generated when empty. 02:00:00:00:00:00 is reserved for the
	// masquerade binding's in-pod bridge.
	// +optional
	MacAddress string `json:"macAddress,omitempty" protobuf:"bytes,5,opt,name=macAddress"`
	// BootOrder is this interface's place in the boot order (network boot); lower values boot
	// first. Values must be at least 1 and unique across disks and interfaces. Interfaces without
	// a boot order are not booted from.
	// +optional
	BootOrder *uint32 `json:"bootOrder,omitempty" protobuf:"varint,6,opt,name=bootOrder"`
	// Binding names a network binding plugin (KubeVirt's binding plugins) instead of a core binding.
	// +optional
	Binding *PluginBinding `json:"binding,omitempty" protobuf:"bytes,7,opt,name=binding"`
	// PortRanges are ranges of ports to forward, like ports.
	// +optional
	// +listType=atomic
	PortRanges []PortRange `json:"portRanges,omitempty" protobuf:"bytes,8,rep,name=portRanges"`
	// PciAddress places the interface at a PCI address in the guest, such as 0000:81:01.10.
	// +optional
	PciAddress string `json:"pciAddress,omitempty" protobuf:"bytes,9,opt,name=pciAddress"`
	// DHCPOptions are extra options the guest's DHCP answers carry.
	// +optional
	DHCPOptions *DHCPOptions `json:"dhcpOptions,omitempty" protobuf:"bytes,10,opt,name=dhcpOptions"`
	// Tag is a label for the interface in the guest's device role metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,11,opt,name=tag"`
	// ACPIIndex is the interface's ACPI index, which gives the guest a stable name for it.
	// +optional
	ACPIIndex int32 `json:"acpiIndex,omitempty" protobuf:"varint,12,opt,name=acpiIndex"`
	// State is up, down or absent (hot-unplug). Defaults to up.
	// +optional
	State InterfaceState `json:"state,omitempty" protobuf:"bytes,13,opt,name=state,casttype=InterfaceState"`
}

// InterfaceState is an interface's link state: up, down or absent.
type InterfaceState string

// PluginBinding names a network binding plugin.
type PluginBinding struct {
	// Name of the plugin, as the KubeVirt settings object registers it.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// PortRange is a range of ports of one protocol.
type PortRange struct {
	// Protocol is TCP or UDP.
	Protocol string `json:"protocol" protobuf:"bytes,1,opt,name=protocol"`
	// Start is the first port.
	Start int32 `json:"start" protobuf:"varint,2,opt,name=start"`
	// End is the last port.
	End int32 `json:"end" protobuf:"varint,3,opt,name=end"`
}

// DHCPOptions are extra DHCP options for the guest.
type DHCPOptions struct {
	// BootFileName is option 67.
	// +optional
	BootFileName string `json:"bootFileName,omitempty" protobuf:"bytes,1,opt,name=bootFileName"`
	// TFTPServerName is option 66.
	// +optional
	TFTPServerName string `json:"tftpServerName,omitempty" protobuf:"bytes,2,opt,name=tftpServerName"`
	// NTPServers is option 42.
	// +optional
	// +listType=atomic
	NTPServers []string `json:"ntpServers,omitempty" protobuf:"bytes,3,rep,name=ntpServers"`
	// PrivateOptions are options 224 to 254.
	// +optional
	// +listType=atomic
	PrivateOptions []DHCPPrivateOptions `json:"privateOptions,omitempty" protobuf:"bytes,4,rep,name=privateOptions"`
}

// DHCPPrivateOptions is one private DHCP option.
type DHCPPrivateOptions struct {
	// Option is its number, 224 to 254.
	Option int32 `json:"option" protobuf:"varint,1,opt,name=option"`
	// Value is its text.
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// InterfaceBindingMethod is how a guest interface is connected to its network. Only one field may be set.
type InterfaceBindingMethod struct {
	// Bridge connects the guest directly to the pod network interface; the guest takes over the pod's
	// IP address. Not live-migratable on the pod network.
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty" protobuf:"bytes,1,opt,name=bridge"`
	// Masquerade puts the guest behind NAT on a private network (spec.networks[].pod.vmNetworkCIDR),
	// reachable through the pod's IP address. Live-migratable.
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty" protobuf:"bytes,2,opt,name=masquerade"`
	// SRIOV passes an SR-IOV virtual function through to the guest.
	// +optional
	SRIOV *InterfaceSRIOV `json:"sriov,omitempty" protobuf:"bytes,3,opt,name=sriov"`
	// DeprecatedSlirp is QEMU's user-mode network (removed from KubeVirt).
	// +optional
	DeprecatedSlirp *DeprecatedInterfaceSlirp `json:"slirp,omitempty" protobuf:"bytes,4,opt,name=slirp"`
	// DeprecatedMacvtap is the macvtap binding (now a binding plugin in KubeVirt).
	// +optional
	DeprecatedMacvtap *DeprecatedInterfaceMacvtap `json:"macvtap,omitempty" protobuf:"bytes,5,opt,name=macvtap"`
	// DeprecatedPasst is the passt binding (now a binding plugin in KubeVirt).
	// +optional
	DeprecatedPasst *DeprecatedInterfacePasst `json:"passt,omitempty" protobuf:"bytes,6,opt,name=passt"`
	// PasstBinding is KubeVirt's core passt binding.
	// +optional
	PasstBinding *InterfacePasstBinding `json:"passtBinding,omitempty" protobuf:"bytes,7,opt,name=passtBinding"`
}

// Bindings names the bindings the interface sets, KubeVirt's core ones and a plugin's ("binding"),
// as its fields are spelt; a valid interface sets exactly one.
func (i *Interface) Bindings() []string {
	var set []string
	for _, b := range []struct {
		name string
		set  bool
	}{
		{"masquerade", i.Masquerade != nil}, {"bridge", i.Bridge != nil}, {"sriov", i.SRIOV != nil},
		{"slirp", i.DeprecatedSlirp != nil}, {"macvtap", i.DeprecatedMacvtap != nil}, {"passt", i.DeprecatedPasst != nil},
		{"passtBinding", i.PasstBinding != nil}, {"binding", i.Binding != nil},
	} {
		if b.set {
			set = append(set, b.name)
		}
	}
	return set
}

// InterfaceSRIOV selects the SR-IOV binding; it has no settings.
type InterfaceSRIOV struct{}

// DeprecatedInterfaceSlirp selects the slirp binding; it has no settings.
type DeprecatedInterfaceSlirp struct{}

// DeprecatedInterfaceMacvtap selects the macvtap binding; it has no settings.
type DeprecatedInterfaceMacvtap struct{}

// DeprecatedInterfacePasst selects the passt binding; it has no settings.
type DeprecatedInterfacePasst struct{}

// InterfacePasstBinding selects the core passt binding; it has no settings.
type InterfacePasstBinding struct{}

// InterfaceBridge selects the bridge binding; it has no settings.
type InterfaceBridge struct{}

// InterfaceMasquerade selects the masquerade (NAT) binding; it has no settings.
type InterfaceMasquerade struct{}

// Port is a port forwarded to the guest.
type Port struct {
	// Name of the port, unique within the interface; an IANA service name (at most 15 lowercase
	// letters, digits and '-', with at least one letter), such as "ssh".
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Protocol is TCP (the default) or UDP.
	// +optional
	// +default="TCP"
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,2,opt,name=protocol"`
	// Port number to forward, from 1 to 65535.
	Port int32 `json:"port" protobuf:"varint,3,opt,name=port"`
}

// Network is a network that guest interfaces can be connected to.
type Network struct {
	// Name of the network, referred to by spec.domain.devices.interfaces[].name.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// NetworkSource is where the network comes from. Exactly one source must be set.
	NetworkSource `json:",inline" protobuf:"bytes,2,opt,name=networkSource"`
}

// NetworkSource is where a network comes from. Only one field may be set.
type NetworkSource struct {
	// Pod is the launcher pod's own network, the default network of the cluster.
	// +optional
	Pod *PodNetwork `json:"pod,omitempty" protobuf:"bytes,1,opt,name=pod"`
	// Multus is a secondary network from a Multus NetworkAttachmentDefinition.
	// +optional
	Multus *MultusNetwork `json:"multus,omitempty" protobuf:"bytes,2,opt,name=multus"`
	// ResourceClaim is a network device from a dynamic resource claim.
	// +optional
	ResourceClaim *ClaimRequest `json:"resourceClaim,omitempty" protobuf:"bytes,3,opt,name=resourceClaim"`
}

// MultusNetwork names a NetworkAttachmentDefinition.
type MultusNetwork struct {
	// NetworkName is the definition's name, as namespace/name or name.
	NetworkName string `json:"networkName" protobuf:"bytes,1,opt,name=networkName"`
	// Default makes it the Pod's default network instead of the cluster's.
	// +optional
	Default bool `json:"default,omitempty" protobuf:"varint,2,opt,name=default"`
}

// PodNetwork is the cluster's pod network, as seen by the launcher pod.
type PodNetwork struct {
	// VMNetworkCIDR is the private IPv4 network the guest lives on with the masquerade binding.
	// Defaults to 10.0.2.0/24.
	// +optional
	VMNetworkCIDR string `json:"vmNetworkCIDR,omitempty" protobuf:"bytes,1,opt,name=vmNetworkCIDR"`
	// VMIPv6NetworkCIDR is the private IPv6 network of the masquerade binding. Defaults to fd10:0:2::/120.
	// +optional
	VMIPv6NetworkCIDR string `json:"vmIPv6NetworkCIDR,omitempty" protobuf:"bytes,2,opt,name=vmIPv6NetworkCIDR"`
}
