package domain

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// defaultVMNetworkCIDR is the guest's private network with the masquerade binding (KubeVirt's).
const defaultVMNetworkCIDR = "10.0.2.0/24"

// maxVMNetworkPrefix is the longest prefix a guest network may have: it needs a gateway (.1),
// the guest (.2) and the DNS forwarder (.3) besides the network and broadcast addresses.
const maxVMNetworkPrefix = 29

// nicDevices maps the interface models to QEMU's NIC devices. igb is not there: QEMU 7.2, the
// version on Vireo's nodes, has no igb device.
var nicDevices = map[string]string{
	"virtio":   "virtio-net-pci",
	"e1000":    "e1000",
	"e1000e":   "e1000e",
	"ne2k_pci": "ne2k_pci",
	"pcnet":    "pcnet",
	"rtl8139":  "rtl8139",
}

// interfaceNamePattern is what interface names may consist of; the name goes into QEMU ids,
// so a ',' must never get through.
var interfaceNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// dnsNamePattern is what a DHCP host name or DNS search domain may consist of.
var dnsNamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// network returns the QEMU arguments of the guest's masquerade interface, or nil when the VMI
// has none.
//
// libvirt 9.0 on Vireo's nodes has no passt backend and ignores <portForward> on user-mode
// interfaces, so the interface is QEMU's slirp, given on the QEMU command line (the domain is
// then marked as custom-argv by libvirt): the guest network has KubeVirt's masquerade layout
// (gateway .1, guest .2 by DHCP, DNS forwarder .3 of spec.networks[].pod.vmNetworkCIDR,
// 10.0.2.0/24 by default), and each port in interfaces[].ports is forwarded from the Pod's
// addresses to the guest. KubeVirt forwards every port when the list is empty; slirp cannot
// forward "all ports", so then no inbound port is forwarded and the guest only has outbound
// connectivity: declare the ports to reach it.
func network(vmi *v1.VirtualMachineInstance, dnsSearch []string, specPath *field.Path) (*libvirtxml.DomainQEMUCommandline, field.ErrorList) {
	spec := &vmi.Spec
	ifaces := spec.Domain.Devices.Interfaces
	if len(ifaces) == 0 {
		return nil, nil
	}
	ifacesPath := specPath.Child("domain", "devices", "interfaces")
	var errs field.ErrorList
	if len(ifaces) > 1 {
		errs = append(errs, field.TooMany(ifacesPath, len(ifaces), 1))
	}
	iface := &ifaces[0]
	iPath := ifacesPath.Index(0)
	netIndex := -1
	for j := range spec.Networks {
		if spec.Networks[j].Name == iface.Name {
			netIndex = j
		}
	}
	switch {
	case !interfaceNamePattern.MatchString(iface.Name):
		return nil, append(errs, field.Invalid(iPath.Child("name"), iface.Name,
			"may contain only letters, digits, '-' and '_' (regular expression [A-Za-z0-9_-]+)"))
	case netIndex < 0:
		return nil, append(errs, field.Invalid(iPath.Child("name"), iface.Name, fmt.Sprintf(
			"no network named %q in spec.networks; every interface must connect to a network of the same name", iface.Name)))
	case spec.Networks[netIndex].Pod == nil:
		return nil, append(errs, field.Required(specPath.Child("networks").Index(netIndex).Child("pod"),
			"the only network Vireo supports is the pod network"))
	case iface.Bridge != nil:
		return nil, append(errs, field.Forbidden(iPath.Child("bridge"),
			"Vireo connects guests to the pod network with the masquerade binding only; replace bridge: {} with masquerade: {}"))
	case iface.Masquerade == nil:
		return nil, append(errs, field.Required(iPath.Child("masquerade"), "an interface needs a binding; set masquerade: {}"))
	}
	cidrPath := specPath.Child("networks").Index(netIndex).Child("pod", "vmNetworkCIDR")
	netdev, e := slirpNetdev(vmi, iface, spec.Networks[netIndex].Pod.VMNetworkCIDR, dnsSearch, iPath, cidrPath)
	errs = append(errs, e...)
	device, e := nicDevice(vmi, iface, iPath)
	errs = append(errs, e...)
	if len(errs) > 0 {
		return nil, errs
	}
	return &libvirtxml.DomainQEMUCommandline{Args: []libvirtxml.DomainQEMUCommandlineArg{
		{Value: "-netdev"}, {Value: netdev}, {Value: "-device"}, {Value: device},
	}}, nil
}

// nicPCIAddress is where the NIC sits on the q35 root bus. QEMU creates command-line devices
// before libvirt's VGA adapter, so a NIC without an address would take slot 1, which libvirt
// gives the VGA adapter, and QEMU would refuse to start. libvirt fills root-bus slots from 1
// upwards (eight root ports per slot) and keeps 0x1e and 0x1f for the DMI bridge and ICH9, so
// slot 0x1c stays free.
const nicPCIAddress = "bus=pcie.0,addr=0x1c"

// netdevID is the QEMU id of an interface's backend. The '.' keeps it apart from libvirt's own
// ids and from disk aliases (disk names are DNS labels).
func netdevID(name string) string { return "vireo.netdev." + name }

// deviceID is the QEMU id of an interface's NIC, kept apart from other ids as netdevID is.
func deviceID(name string) string { return "vireo.net." + name }

// slirpNetdev returns the -netdev value of the slirp backend of iface.
func slirpNetdev(vmi *v1.VirtualMachineInstance, iface *v1.Interface, cidr string, dnsSearch []string, iPath, cidrPath *field.Path) (string, field.ErrorList) {
	if cidr == "" {
		cidr = defaultVMNetworkCIDR
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !prefix.Addr().Is4() || prefix.Bits() > maxVMNetworkPrefix {
		return "", field.ErrorList{field.Invalid(cidrPath, cidr, fmt.Sprintf(
			"must be an IPv4 network in CIDR notation with a prefix of at most /%d, such as 10.0.2.0/24", maxVMNetworkPrefix))}
	}
	base := prefix.Masked().Addr()
	gateway := base.Next()
	guest := gateway.Next()
	dns := guest.Next()
	opts := []string{
		"user", "id=" + netdevID(iface.Name),
		"net=" + prefix.Masked().String(), "host=" + gateway.String(),
		"dhcpstart=" + guest.String(), "dns=" + dns.String(),
	}
	var errs field.ErrorList
	switch h := vmi.Spec.Hostname; {
	case h != "" && !dnsNamePattern.MatchString(h):
		errs = append(errs, field.Invalid(field.NewPath("spec", "hostname"), h, "must be a DNS-1123 label"))
	case h != "":
		opts = append(opts, "hostname="+h)
	case dnsNamePattern.MatchString(vmi.Name):
		opts = append(opts, "hostname="+vmi.Name)
	}
	for _, domain := range dnsSearch {
		if !dnsNamePattern.MatchString(domain) {
			errs = append(errs, field.InternalError(iPath, fmt.Errorf("the launcher gave an invalid DNS search domain %q", domain)))
			continue
		}
		opts = append(opts, "dnssearch="+domain)
	}
	for k, p := range iface.Ports {
		pPath := iPath.Child("ports").Index(k)
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" {
			errs = append(errs, field.NotSupported(pPath.Child("protocol"), p.Protocol, []string{"TCP", "UDP"}))
			continue
		}
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, field.Invalid(pPath.Child("port"), p.Port, "must be a port number from 1 to 65535"))
			continue
		}
		opts = append(opts, fmt.Sprintf("hostfwd=%s::%d-%s:%d", proto, p.Port, guest, p.Port))
	}
	return strings.Join(opts, ","), errs
}

// nicDevice returns the -device value of the NIC of iface: its model, MAC address and boot order.
func nicDevice(vmi *v1.VirtualMachineInstance, iface *v1.Interface, iPath *field.Path) (string, field.ErrorList) {
	model := iface.Model
	if model == "" {
		model = "virtio"
	}
	qemuDevice, ok := nicDevices[model]
	if !ok {
		detail := "must be virtio, e1000, e1000e, ne2k_pci, pcnet or rtl8139"
		if model == "igb" {
			detail = "the QEMU on Vireo's nodes (7.2) has no igb NIC; use e1000e or virtio"
		}
		return "", field.ErrorList{field.Invalid(iPath.Child("model"), model, detail)}
	}
	mac, ferr := interfaceMAC(vmi, iface, iPath)
	if ferr != nil {
		return "", field.ErrorList{ferr}
	}
	opts := []string{qemuDevice, "netdev=" + netdevID(iface.Name), "id=" + deviceID(iface.Name), "mac=" + mac, nicPCIAddress}
	if iface.BootOrder != nil {
		if *iface.BootOrder < 1 {
			return "", field.ErrorList{field.Invalid(iPath.Child("bootOrder"), *iface.BootOrder, "must be at least 1; lower values boot first")}
		}
		opts = append(opts, fmt.Sprintf("bootindex=%d", *iface.BootOrder))
	}
	return strings.Join(opts, ","), nil
}
