package validation

import (
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	ifacesPath   = "spec.domain.devices.interfaces"
	networksPath = "spec.networks"
)

// masq returns a masquerade interface named name.
func masq(name string) v1.Interface {
	return v1.Interface{Name: name, InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}
}

// podNet returns a pod network named name.
func podNet(name string) v1.Network {
	return v1.Network{Name: name, NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}
}

// setNetworking returns a mutation that replaces the networks and interfaces.
func setNetworking(nets []v1.Network, ifaces ...v1.Interface) func(s *v1.VirtualMachineInstanceSpec) {
	return func(s *v1.VirtualMachineInstanceSpec) {
		s.Networks = nets
		s.Domain.Devices.Interfaces = ifaces
	}
}

// setIface returns a mutation that replaces the default interface with iface.
func setIface(iface v1.Interface) func(s *v1.VirtualMachineInstanceSpec) {
	return func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Interfaces[0] = iface }
}

func TestNetworkValidation(t *testing.T) {
	cidr := func(c string) v1.Network {
		return v1.Network{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{VMNetworkCIDR: c}}}
	}
	runSpecCases(t, []specCase{
		{name: "no networking at all", mutate: setNetworking(nil)},
		{name: "underscore name", mutate: setNetworking([]v1.Network{podNet("pod_net-1")}, masq("pod_net-1"))},
		{name: "bad name", mutate: setNetworking([]v1.Network{podNet("pod.net")}, masq("pod.net")),
			want: []fe{{invalid, networksPath + "[0].name"}, {invalid, ifacesPath + "[0].name"}}},
		{name: "unnamed", mutate: setNetworking([]v1.Network{podNet("")}, masq("")),
			want: []fe{{required, networksPath + "[0].name"}, {required, ifacesPath + "[0].name"}}},
		{name: "duplicate network", mutate: setNetworking([]v1.Network{podNet("a"), podNet("a")}, masq("a")),
			want: []fe{{duplicate, networksPath + "[1].name"}, {invalid, networksPath + "[1].pod"}}},
		{name: "two pod networks", mutate: setNetworking([]v1.Network{podNet("a"), podNet("b")}, masq("a"), masq("b")),
			want: []fe{{invalid, networksPath + "[1].pod"}}},
		{name: "network without source", mutate: setNetworking([]v1.Network{{Name: "default"}}, masq("default")),
			want: []fe{{required, networksPath + "[0].pod"}}},
		{name: "network without interface", mutate: setNetworking([]v1.Network{podNet("default")}),
			want: []fe{{invalid, networksPath + "[0].name"}}},
		{name: "interface without network", mutate: setNetworking(nil, masq("default")),
			want: []fe{{invalid, ifacesPath + "[0].name"}}},
		{name: "interface names another network", mutate: setNetworking([]v1.Network{podNet("a")}, masq("b")),
			want: []fe{{invalid, ifacesPath + "[0].name"}, {invalid, networksPath + "[0].name"}}},
		{name: "duplicate interface", mutate: setNetworking([]v1.Network{podNet("a")}, masq("a"), masq("a")),
			want: []fe{{duplicate, ifacesPath + "[1].name"}}},
		{name: "vm network cidr", mutate: setNetworking([]v1.Network{cidr("10.11.0.0/24")}, masq("default"))},
		{name: "bad vm network cidr", mutate: setNetworking([]v1.Network{cidr("10.11.0.0")}, masq("default")),
			want: []fe{{invalid, networksPath + "[0].pod.vmNetworkCIDR"}}},
		{name: "ipv6 vm network cidr", mutate: setNetworking([]v1.Network{cidr("fd10::/64")}, masq("default")),
			want: []fe{{invalid, networksPath + "[0].pod.vmNetworkCIDR"}}},
		{name: "vm network without room for the gateway and the guest", mutate: setNetworking([]v1.Network{cidr("10.11.0.0/30")}, masq("default")),
			want: []fe{{invalid, networksPath + "[0].pod.vmNetworkCIDR"}}},
	})
}

func TestInterfaceBindingValidation(t *testing.T) {
	i0 := ifacesPath + "[0]"
	bridge := v1.Interface{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}}
	both := v1.Interface{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{
		Bridge: &v1.InterfaceBridge{}, Masquerade: &v1.InterfaceMasquerade{}}}
	runSpecCases(t, []specCase{
		{name: "bridge accepted (the VMI fails Unsupported)", mutate: setIface(bridge)},
		{name: "no binding", mutate: setIface(v1.Interface{Name: "default"}), want: []fe{{required, i0 + ".masquerade"}}},
		{name: "two bindings", mutate: setIface(both), want: []fe{{invalid, i0}}},
		// KubeVirt's other bindings are stored (the VMI then fails with reason Unsupported).
		{name: "sriov", mutate: setIface(v1.Interface{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{SRIOV: &v1.InterfaceSRIOV{}}})},
		{name: "a binding plugin", mutate: setIface(v1.Interface{Name: "default", Binding: &v1.PluginBinding{Name: "passt"}})},
		{name: "masquerade and a plugin", mutate: setIface(v1.Interface{Name: "default", Binding: &v1.PluginBinding{Name: "passt"},
			InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}), want: []fe{{invalid, i0}}},
		{name: "a multus network", mutate: setNetworking([]v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{
			Multus: &v1.MultusNetwork{NetworkName: "ns/bridge"}}}}, masq("default"))},
		{name: "pod and multus", mutate: setNetworking([]v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{
			Pod: &v1.PodNetwork{}, Multus: &v1.MultusNetwork{NetworkName: "ns/bridge"}}}}, masq("default")),
			want: []fe{{invalid, networksPath + "[0]"}}},
	})
}

func TestInterfaceDetailsValidation(t *testing.T) {
	i0 := ifacesPath + "[0]"
	with := func(f func(i *v1.Interface)) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { f(&s.Domain.Devices.Interfaces[0]) }
	}
	ports := func(p ...v1.Port) func(s *v1.VirtualMachineInstanceSpec) {
		return with(func(i *v1.Interface) { i.Ports = p })
	}
	runSpecCases(t, []specCase{
		{name: "e1000e", mutate: with(func(i *v1.Interface) { i.Model = "e1000e" })},
		{name: "rtl8139", mutate: with(func(i *v1.Interface) { i.Model = "rtl8139" })},
		{name: "igb", mutate: with(func(i *v1.Interface) { i.Model = "igb" })},
		{name: "ne2k_pci", mutate: with(func(i *v1.Interface) { i.Model = "ne2k_pci" })},
		{name: "pcnet", mutate: with(func(i *v1.Interface) { i.Model = "pcnet" })},
		{name: "unknown model", mutate: with(func(i *v1.Interface) { i.Model = "virtio-net-pci" }),
			want: []fe{{notSupported, i0 + ".model"}}},
		{name: "mac", mutate: with(func(i *v1.Interface) { i.MacAddress = "02:00:00:ab:CD:ef" })},
		{name: "mac with dashes", mutate: with(func(i *v1.Interface) { i.MacAddress = "02-00-00-ab-cd-ef" })},
		{name: "bad mac", mutate: with(func(i *v1.Interface) { i.MacAddress = "02:00:00:ab:cd" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "64-bit mac", mutate: with(func(i *v1.Interface) { i.MacAddress = "02:00:00:00:00:ab:cd:ef" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "multicast mac", mutate: with(func(i *v1.Interface) { i.MacAddress = "01:00:5e:00:00:01" })},
		{name: "masquerade bridge mac", mutate: with(func(i *v1.Interface) { i.MacAddress = "02:00:00:00:00:00" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "ports", mutate: ports(v1.Port{Name: "http", Port: 80}, v1.Port{Name: "dns", Protocol: "UDP", Port: 53},
			v1.Port{Protocol: "TCP", Port: 65535}, v1.Port{Port: 1})},
		{name: "port 0", mutate: ports(v1.Port{Port: 0}), want: []fe{{required, i0 + ".ports[0].port"}}},
		{name: "negative port", mutate: ports(v1.Port{Port: -1}), want: []fe{{invalid, i0 + ".ports[0].port"}}},
		{name: "port 65536", mutate: ports(v1.Port{Port: 65536}), want: []fe{{invalid, i0 + ".ports[0].port"}}},
		{name: "bad protocol", mutate: ports(v1.Port{Port: 22, Protocol: "SCTP"}), want: []fe{{notSupported, i0 + ".ports[0].protocol"}}},
		{name: "lowercase protocol", mutate: ports(v1.Port{Port: 22, Protocol: "tcp"}), want: []fe{{notSupported, i0 + ".ports[0].protocol"}}},
		{name: "duplicate port name", mutate: ports(v1.Port{Name: "a", Port: 1}, v1.Port{Name: "a", Port: 2}),
			want: []fe{{duplicate, i0 + ".ports[1].name"}}},
		{name: "unnamed ports may repeat", mutate: ports(v1.Port{Port: 1}, v1.Port{Port: 2})},
		{name: "same port over TCP and UDP", mutate: ports(v1.Port{Port: 53}, v1.Port{Port: 53, Protocol: "UDP"})},
		{name: "same port and protocol twice", mutate: ports(v1.Port{Port: 53}, v1.Port{Port: 53, Protocol: "TCP"}),
			want: []fe{{duplicate, i0 + ".ports[1]"}}},
		{name: "port name with dash", mutate: ports(v1.Port{Name: "web-1", Port: 80})},
		{name: "port name too long", mutate: ports(v1.Port{Name: "averyveryverylongname", Port: 80}),
			want: []fe{{invalid, i0 + ".ports[0].name"}}},
		{name: "port name uppercase", mutate: ports(v1.Port{Name: "HTTP", Port: 80}), want: []fe{{invalid, i0 + ".ports[0].name"}}},
		{name: "port name only digits", mutate: ports(v1.Port{Name: "8080", Port: 80}), want: []fe{{invalid, i0 + ".ports[0].name"}}},
		{name: "port name with double dash", mutate: ports(v1.Port{Name: "a--b", Port: 80}), want: []fe{{invalid, i0 + ".ports[0].name"}}},
	})
}
