package validation

import (
	"fmt"
	"net"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
	"github.com/vireo-dev/vireo/internal/podnetwork"
)

// networkNamePattern is what network and interface names may consist of.
var networkNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// interfaceModels are the NIC models a guest interface may emulate (KubeVirt's list).
var interfaceModels = []string{"virtio", "e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139"}

// masqueradeBridgeMAC is the MAC address of the in-pod bridge of the masquerade binding; a guest
// interface behind masquerade may not use it (KubeVirt's rule).
const masqueradeBridgeMAC = "02:00:00:00:00:00"

// portProtocols are the protocols a forwarded port may use.
var portProtocols = []string{"TCP", "UDP"}

// validateNetworking validates the networks and the interfaces connected to them: they pair up one
// to one by name, there is at most one pod network, and every interface uses the masquerade binding.
func validateNetworking(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	networksPath := fldPath.Child("networks")
	ifacesPath := fldPath.Child("domain", "devices", "interfaces")
	networks := map[string]bool{}
	podNetwork := ""
	for i := range spec.Networks {
		n := &spec.Networks[i]
		nPath := networksPath.Index(i)
		errs = append(errs, validateNetworkName(n.Name, networks, nPath.Child("name"))...)
		networks[n.Name] = true
		switch sources := setOptions(option{"pod", n.Pod != nil}, option{"multus", n.Multus != nil},
			option{"resourceClaim", n.ResourceClaim != nil}); {
		case len(sources) == 0:
			errs = append(errs, field.Required(nPath.Child("pod"),
				"a network must have exactly one source: pod, multus or resourceClaim"))
		case len(sources) > 1:
			errs = append(errs, field.Invalid(nPath, strings.Join(sources, ", "), "a network must have exactly one source"))
		}
		if n.Pod == nil {
			continue
		}
		if podNetwork != "" {
			errs = append(errs, field.Invalid(nPath.Child("pod"), n.Name, fmt.Sprintf(
				"only one pod network is allowed, and network %q already is one", podNetwork)))
		}
		podNetwork = n.Name
		errs = append(errs, validateVMNetworkCIDR(n.Pod.VMNetworkCIDR, nPath.Child("pod", "vmNetworkCIDR"))...)
	}
	ifaces := map[string]bool{}
	for i := range spec.Domain.Devices.Interfaces {
		iface := &spec.Domain.Devices.Interfaces[i]
		iPath := ifacesPath.Index(i)
		errs = append(errs, validateNetworkName(iface.Name, ifaces, iPath.Child("name"))...)
		ifaces[iface.Name] = true
		if iface.Name != "" && !networks[iface.Name] {
			errs = append(errs, field.Invalid(iPath.Child("name"), iface.Name, fmt.Sprintf(
				"no network named %q in %s; every interface must connect to a network of the same name",
				iface.Name, networksPath)))
		}
		errs = append(errs, validateInterface(iface, iPath)...)
	}
	for i, n := range spec.Networks {
		if n.Name != "" && !ifaces[n.Name] {
			errs = append(errs, field.Invalid(networksPath.Index(i).Child("name"), n.Name, fmt.Sprintf(
				"no interface uses this network; add an interface named %q to %s", n.Name, ifacesPath)))
		}
	}
	return errs
}

// validateNetworkName checks the name of a network or interface: required, made of letters,
// digits, '-' and '_', and not already in seen.
func validateNetworkName(name string, seen map[string]bool, fldPath *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(fldPath, "a name is required")}
	case seen[name]:
		return field.ErrorList{field.Duplicate(fldPath, name)}
	case !networkNamePattern.MatchString(name):
		return field.ErrorList{field.Invalid(fldPath, name,
			"may contain only letters, digits, '-' and '_' (regular expression [A-Za-z0-9_-]+)")}
	}
	return nil
}

// validateVMNetworkCIDR checks that the guest's private network, when given, is an IPv4 CIDR
// with room for the gateway and the guest (the masquerade binding's layout).
func validateVMNetworkCIDR(cidr string, fldPath *field.Path) field.ErrorList {
	if cidr == "" {
		return nil
	}
	if _, err := podnetwork.ParseLayout(cidr); err != nil {
		return field.ErrorList{field.Invalid(fldPath, cidr, err.Error())}
	}
	return nil
}

// validateInterface checks an interface's binding, model, MAC address and ports.
func validateInterface(iface *v1.Interface, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch bindings := iface.Bindings(); {
	case len(bindings) == 0:
		errs = append(errs, field.Required(fldPath.Child("masquerade"),
			"an interface needs a binding; set masquerade: {}"))
	case len(bindings) > 1:
		errs = append(errs, field.Invalid(fldPath, strings.Join(bindings, ", "),
			"set exactly one binding: masquerade"))
	}
	errs = append(errs, fieldcheck.OptionalEnum(iface.Model, interfaceModels, fldPath.Child("model"))...)
	if iface.MacAddress != "" {
		errs = append(errs, validateMAC(iface.MacAddress, fldPath.Child("macAddress"))...)
		if iface.Masquerade != nil && iface.MacAddress == masqueradeBridgeMAC {
			errs = append(errs, field.Invalid(fldPath.Child("macAddress"), iface.MacAddress,
				"this MAC address is reserved for the masquerade binding's in-pod bridge; choose another one"))
		}
	}
	return append(errs, validatePorts(iface.Ports, fldPath.Child("ports"))...)
}

// validatePorts checks forwarded ports as KubeVirt does (a port number from 1 to 65535, TCP or
// UDP, names that are unique IANA service names) and, because server-side apply merges ports by
// port and protocol, that no port and protocol pair appears twice.
func validatePorts(ports []v1.Port, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	keys := map[string]bool{}
	for j, p := range ports {
		pPath := fldPath.Index(j)
		switch {
		case p.Port == 0:
			errs = append(errs, field.Required(pPath.Child("port"), "the port number to forward is required, from 1 to 65535"))
		case p.Port < 1 || p.Port > 65535:
			errs = append(errs, field.Invalid(pPath.Child("port"), p.Port, "must be a port number from 1 to 65535"))
		}
		errs = append(errs, fieldcheck.OptionalEnum(p.Protocol, portProtocols, pPath.Child("protocol"))...)
		protocol := p.Protocol
		if protocol == "" {
			protocol = "TCP"
		}
		if key := fmt.Sprintf("%d/%s", p.Port, protocol); keys[key] {
			errs = append(errs, field.Duplicate(pPath, key))
		} else {
			keys[key] = true
		}
		if p.Name == "" {
			continue
		}
		if names[p.Name] {
			errs = append(errs, field.Duplicate(pPath.Child("name"), p.Name))
		}
		names[p.Name] = true
		errs = append(errs, messagesToError(validation.IsValidPortName(p.Name), p.Name, pPath.Child("name"))...)
	}
	return errs
}

// validateMAC checks that mac is a 48-bit MAC address. Multicast addresses are accepted, as in KubeVirt.
func validateMAC(mac string, fldPath *field.Path) field.ErrorList {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return field.ErrorList{field.Invalid(fldPath, mac, "must be a 48-bit MAC address such as 02:00:00:ab:cd:ef or 02-00-00-AB-CD-EF")}
	}
	return nil
}

// option is one of several fields of which exactly one must be set (a network's sources).
type option struct {
	name string
	set  bool
}

// setOptions names the options that are set, in order.
func setOptions(opts ...option) []string {
	var set []string
	for _, o := range opts {
		if o.set {
			set = append(set, o.name)
		}
	}
	return set
}
