package domain

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/podnetwork"
)

// nicModels are the NIC models libvirt and QEMU offer. igb is not there: QEMU 7.2, the version
// on Vireo's nodes, has no igb device.
var nicModels = map[string]bool{"virtio": true, "e1000": true, "e1000e": true, "ne2k_pci": true, "pcnet": true, "rtl8139": true}

// interfaceNamePattern is what interface names may consist of; the name goes into QEMU ids,
// so a ',' must never get through.
var interfaceNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// dnsNamePattern is what a DHCP host name or DNS search domain may consist of.
var dnsNamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// network returns the guest's masquerade interface, or nil when the VMI has none.
//
// The interface is KubeVirt's masquerade binding: QEMU's NIC is connected to the tap device
// podnetwork.Tap, which the node's network helper created in the Pod's network namespace (on
// the bridge with the gateway address, with NAT rules that forward the Pod's ports to the
// guest) and gave to the launcher's user, so that libvirt opens it unprivileged
// (managed='no'). The launcher serves the guest its address by DHCP (package dhcp).
func network(vmi *v1.VirtualMachineInstance, tap string, specPath *field.Path) (*libvirtxml.DomainInterface, field.ErrorList) {
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
	cidr := spec.Networks[netIndex].Pod.VMNetworkCIDR
	if _, err := podnetwork.ParseLayout(cidr); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("networks").Index(netIndex).Child("pod", "vmNetworkCIDR"), cidr, err.Error()))
	}
	errs = append(errs, checkPorts(iface, iPath)...)
	if h := vmi.Spec.Hostname; h != "" && !dnsNamePattern.MatchString(h) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "hostname"), h, "must be a DNS-1123 label"))
	}
	nic, e := nicDevice(vmi, iface, tap, iPath)
	errs = append(errs, e...)
	if len(errs) > 0 {
		return nil, errs
	}
	return nic, nil
}

// checkPorts checks the ports the interface forwards.
func checkPorts(iface *v1.Interface, iPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, p := range iface.Ports {
		pPath := iPath.Child("ports").Index(k)
		if proto := strings.ToLower(p.Protocol); proto != "" && proto != "tcp" && proto != "udp" {
			errs = append(errs, field.NotSupported(pPath.Child("protocol"), p.Protocol, []string{"TCP", "UDP"}))
		}
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, field.Invalid(pPath.Child("port"), p.Port, "must be a port number from 1 to 65535"))
		}
	}
	return errs
}

// GuestHostname is the host name the guest is given by DHCP: spec.hostname, else the VMI's
// name when it is a DNS label, else none.
func GuestHostname(vmi *v1.VirtualMachineInstance) string {
	if h := vmi.Spec.Hostname; h != "" {
		return h
	}
	if dnsNamePattern.MatchString(vmi.Name) {
		return vmi.Name
	}
	return ""
}

// nicDevice returns the NIC of iface, on the tap device tap: its model, MAC address and boot
// order.
func nicDevice(vmi *v1.VirtualMachineInstance, iface *v1.Interface, tap string, iPath *field.Path) (*libvirtxml.DomainInterface, field.ErrorList) {
	model := iface.Model
	if model == "" {
		model = "virtio"
	}
	if !nicModels[model] {
		detail := "must be virtio, e1000, e1000e, ne2k_pci, pcnet or rtl8139"
		if model == "igb" {
			detail = "the QEMU on Vireo's nodes (7.2) has no igb NIC; use e1000e or virtio"
		}
		return nil, field.ErrorList{field.Invalid(iPath.Child("model"), model, detail)}
	}
	mac, ferr := interfaceMAC(vmi, iface, iPath)
	if ferr != nil {
		return nil, field.ErrorList{ferr}
	}
	nic := &libvirtxml.DomainInterface{
		Source: &libvirtxml.DomainInterfaceSource{Ethernet: &libvirtxml.DomainInterfaceSourceEthernet{}},
		Target: &libvirtxml.DomainInterfaceTarget{Dev: tap, Managed: "no"},
		MAC:    &libvirtxml.DomainInterfaceMAC{Address: mac},
		Model:  &libvirtxml.DomainInterfaceModel{Type: model},
		Alias:  &libvirtxml.DomainAlias{Name: InterfaceAlias(iface.Name)},
	}
	if iface.BootOrder != nil {
		if *iface.BootOrder < 1 {
			return nil, field.ErrorList{field.Invalid(iPath.Child("bootOrder"), *iface.BootOrder, "must be at least 1; lower values boot first")}
		}
		nic.Boot = &libvirtxml.DomainDeviceBoot{Order: uint(*iface.BootOrder)}
	}
	return nic, nil
}

// InterfaceAlias is the libvirt alias of interface name's NIC (user aliases start with "ua-").
func InterfaceAlias(name string) string { return "ua-net-" + name }
