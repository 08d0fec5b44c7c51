package validation

import (
	"testing"

	"github.com/vireo-dev/vireo/apis/core"
)

const (
	ifacesPath   = "spec.domain.devices.interfaces"
	networksPath = "spec.networks"
)

// masq returns a masquerade interface named name.
func masq(name string) core.Interface {
	return core.Interface{Name: name, InterfaceBindingMethod: core.InterfaceBindingMethod{Masquerade: &core.InterfaceMasquerade{}}}
}

// podNet returns a pod network named name.
func podNet(name string) core.Network {
	return core.Network{Name: name, NetworkSource: core.NetworkSource{Pod: &core.PodNetwork{}}}
}

// setNetworking returns a mutation that replaces the networks and interfaces.
func setNetworking(nets []core.Network, ifaces ...core.Interface) func(s *core.VirtualMachineInstanceSpec) {
	return func(s *core.VirtualMachineInstanceSpec) {
		s.Networks = nets
		s.Domain.Devices.Interfaces = ifaces
	}
}

// setIface returns a mutation that replaces the default interface with iface.
func setIface(iface core.Interface) func(s *core.VirtualMachineInstanceSpec) {
	return func(s *core.VirtualMachineInstanceSpec) { s.Domain.Devices.Interfaces[0] = iface }
}

func TestNetworkValidation(t *testing.T) {
	cidr := func(c string) core.Network {
		return core.Network{Name: "default", NetworkSource: core.NetworkSource{Pod: &core.PodNetwork{VMNetworkCIDR: c}}}
	}
	runSpecCases(t, []specCase{
		{name: "no networking at all", mutate: setNetworking(nil)},
		{name: "underscore name", mutate: setNetworking([]core.Network{podNet("pod_net-1")}, masq("pod_net-1"))},
		{name: "bad name", mutate: setNetworking([]core.Network{podNet("pod.net")}, masq("pod.net")),
			want: []fe{{invalid, networksPath + "[0].name"}, {invalid, ifacesPath + "[0].name"}}},
		{name: "unnamed", mutate: setNetworking([]core.Network{podNet("")}, masq("")),
			want: []fe{{required, networksPath + "[0].name"}, {required, ifacesPath + "[0].name"}}},
		{name: "duplicate network", mutate: setNetworking([]core.Network{podNet("a"), podNet("a")}, masq("a")),
			want: []fe{{duplicate, networksPath + "[1].name"}, {invalid, networksPath + "[1].pod"}}},
		{name: "two pod networks", mutate: setNetworking([]core.Network{podNet("a"), podNet("b")}, masq("a"), masq("b")),
			want: []fe{{invalid, networksPath + "[1].pod"}}},
		{name: "network without source", mutate: setNetworking([]core.Network{{Name: "default"}}, masq("default")),
			want: []fe{{required, networksPath + "[0].pod"}}},
		{name: "network without interface", mutate: setNetworking([]core.Network{podNet("default")}),
			want: []fe{{invalid, networksPath + "[0].name"}}},
		{name: "interface without network", mutate: setNetworking(nil, masq("default")),
			want: []fe{{invalid, ifacesPath + "[0].name"}}},
		{name: "interface names another network", mutate: setNetworking([]core.Network{podNet("a")}, masq("b")),
			want: []fe{{invalid, ifacesPath + "[0].name"}, {invalid, networksPath + "[0].name"}}},
		{name: "duplicate interface", mutate: setNetworking([]core.Network{podNet("a")}, masq("a"), masq("a")),
			want: []fe{{duplicate, ifacesPath + "[1].name"}}},
		{name: "vm network cidr", mutate: setNetworking([]core.Network{cidr("10.11.0.0/24")}, masq("default"))},
		{name: "bad vm network cidr", mutate: setNetworking([]core.Network{cidr("10.11.0.0")}, masq("default")),
			want: []fe{{invalid, networksPath + "[0].pod.vmNetworkCIDR"}}},
		{name: "ipv6 vm network cidr", mutate: setNetworking([]core.Network{cidr("fd10::/64")}, masq("default")),
			want: []fe{{invalid, networksPath + "[0].pod.vmNetworkCIDR"}}},
	})
}

func TestInterfaceBindingValidation(t *testing.T) {
	i0 := ifacesPath + "[0]"
	bridge := core.Interface{Name: "default", InterfaceBindingMethod: core.InterfaceBindingMethod{Bridge: &core.InterfaceBridge{}}}
	both := core.Interface{Name: "default", InterfaceBindingMethod: core.InterfaceBindingMethod{
		Bridge: &core.InterfaceBridge{}, Masquerade: &core.InterfaceMasquerade{}}}
	runSpecCases(t, []specCase{
		{name: "bridge refused", mutate: setIface(bridge), want: []fe{{forbidden, i0 + ".bridge"}}},
		{name: "no binding", mutate: setIface(core.Interface{Name: "default"}), want: []fe{{required, i0 + ".masquerade"}}},
		{name: "two bindings", mutate: setIface(both), want: []fe{{forbidden, i0 + ".bridge"}, {invalid, i0}}},
	})
}

func TestBridgeMessage(t *testing.T) {
	vmi := validVMI()
	vmi.Spec.Domain.Devices.Interfaces[0] = core.Interface{Name: "default",
		InterfaceBindingMethod: core.InterfaceBindingMethod{Bridge: &core.InterfaceBridge{}}}
	errs := ValidateVirtualMachineInstance(vmi)
	want := "spec.domain.devices.interfaces[0].bridge: Forbidden: bridge binding is not supported by Vireo's runtime; use masquerade"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("errors = %v, want %q", errs, want)
	}
}

func TestInterfaceDetailsValidation(t *testing.T) {
	i0 := ifacesPath + "[0]"
	with := func(f func(i *core.Interface)) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) { f(&s.Domain.Devices.Interfaces[0]) }
	}
	ports := func(p ...core.Port) func(s *core.VirtualMachineInstanceSpec) {
		return with(func(i *core.Interface) { i.Ports = p })
	}
	runSpecCases(t, []specCase{
		{name: "e1000e", mutate: with(func(i *core.Interface) { i.Model = "e1000e" })},
		{name: "rtl8139", mutate: with(func(i *core.Interface) { i.Model = "rtl8139" })},
		{name: "unknown model", mutate: with(func(i *core.Interface) { i.Model = "ne2k_pci" }),
			want: []fe{{notSupported, i0 + ".model"}}},
		{name: "mac", mutate: with(func(i *core.Interface) { i.MacAddress = "02:00:00:ab:CD:ef" })},
		{name: "mac with dashes", mutate: with(func(i *core.Interface) { i.MacAddress = "02-00-00-ab-cd-ef" })},
		{name: "bad mac", mutate: with(func(i *core.Interface) { i.MacAddress = "02:00:00:ab:cd" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "64-bit mac", mutate: with(func(i *core.Interface) { i.MacAddress = "02:00:00:00:00:ab:cd:ef" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "multicast mac", mutate: with(func(i *core.Interface) { i.MacAddress = "01:00:5e:00:00:01" }),
			want: []fe{{invalid, i0 + ".macAddress"}}},
		{name: "ports", mutate: ports(core.Port{Name: "http", Port: 80}, core.Port{Name: "dns", Protocol: "UDP", Port: 53},
			core.Port{Protocol: "TCP", Port: 65535}, core.Port{Port: 1})},
		{name: "port 0", mutate: ports(core.Port{Port: 0}), want: []fe{{invalid, i0 + ".ports[0].port"}}},
		{name: "port 65536", mutate: ports(core.Port{Port: 65536}), want: []fe{{invalid, i0 + ".ports[0].port"}}},
		{name: "bad protocol", mutate: ports(core.Port{Port: 22, Protocol: "SCTP"}), want: []fe{{notSupported, i0 + ".ports[0].protocol"}}},
		{name: "lowercase protocol", mutate: ports(core.Port{Port: 22, Protocol: "tcp"}), want: []fe{{notSupported, i0 + ".ports[0].protocol"}}},
		{name: "duplicate port name", mutate: ports(core.Port{Name: "a", Port: 1}, core.Port{Name: "a", Port: 2}),
			want: []fe{{duplicate, i0 + ".ports[1].name"}}},
		{name: "unnamed ports may repeat", mutate: ports(core.Port{Port: 1}, core.Port{Port: 2})},
	})
}
