package domain

import (
	"crypto/sha256"
	"net"
	"strings"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// derivedUUIDNamespace is the namespace of the version-5 UUIDs derived from VMI UIDs for VMIs
// stored without a firmware UUID. It must never change: such guests would see a new system UUID.
var derivedUUIDNamespace = uuid.MustParse("0b7f3a52-4c1e-5d7e-9a33-6f1f0c2d8e41")

// macPrefix is the first octet of derived MAC addresses: locally administered (bit 1 set) and
// unicast (bit 0 clear), so they never collide with a vendor's addresses.
const macPrefix = 0x02

// reservedMAC is the MAC of the masquerade binding's in-pod bridge in KubeVirt; a guest never gets it.
const reservedMAC = "02:00:00:00:00:00"

// FirmwareUUID returns the UUID of vmi's domain and of its SMBIOS system, in canonical form:
// spec.domain.firmware.uuid when set (the API server sets it on every VMI it stores), else a
// version-5 UUID derived from the VMI's UID, so it stays the same across launcher restarts and
// migrations.
func FirmwareUUID(vmi *v1.VirtualMachineInstance) (string, error) {
	id, errs := firmwareUUID(vmi)
	if len(errs) > 0 {
		return "", errs.ToAggregate()
	}
	return id, nil
}

// firmwareUUID is FirmwareUUID with field errors.
func firmwareUUID(vmi *v1.VirtualMachineInstance) (string, field.ErrorList) {
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.UUID != "" {
		id, ok := canonicalUUID(string(fw.UUID))
		if !ok {
			return "", field.ErrorList{field.Invalid(field.NewPath("spec", "domain", "firmware", "uuid"), string(fw.UUID),
				"must be a UUID of 32 hexadecimal digits, such as 6a1a24a1-4061-4607-8bf4-a3963d0c5895")}
		}
		return id, nil
	}
	if vmi.UID == "" {
		return "", field.ErrorList{field.Required(field.NewPath("metadata", "uid"),
			"the VMI has no UID to derive its firmware UUID from; set spec.domain.firmware.uuid")}
	}
	return uuid.NewSHA1(derivedUUIDNamespace, []byte(vmi.UID)).String(), nil
}

// canonicalUUID rewrites a UUID in any form libvirt accepts (32 hexadecimal digits in pairs,
// '-' or ' ' allowed between pairs, whitespace around) as lowercase 8-4-4-4-12.
func canonicalUUID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	var hex strings.Builder
	for pairs := 0; pairs < 16; pairs++ {
		s = strings.TrimLeft(s, "- ")
		if len(s) < 2 || !isHex(s[0]) || !isHex(s[1]) {
			return "", false
		}
		hex.WriteString(strings.ToLower(s[:2]))
		s = s[2:]
	}
	if s != "" {
		return "", false
	}
	h := hex.String()
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// InterfaceMAC returns the MAC address of iface, an interface of vmi, as lowercase
// colon-separated hex: interfaces[].macAddress when set, else one derived from the VMI's UID
// and the interface name with a locally administered prefix (02:...), the same on every node
// so it survives migration. The node agent reports the same value in status.interfaces.
func InterfaceMAC(vmi *v1.VirtualMachineInstance, iface *v1.Interface) (string, error) {
	mac, err := interfaceMAC(vmi, iface, field.NewPath("spec", "domain", "devices", "interfaces").Key(iface.Name))
	if err != nil {
		return "", err
	}
	return mac, nil
}

// interfaceMAC is InterfaceMAC with the field path of iface for errors.
func interfaceMAC(vmi *v1.VirtualMachineInstance, iface *v1.Interface, ifacePath *field.Path) (string, *field.Error) {
	if iface.MacAddress != "" {
		hw, err := net.ParseMAC(iface.MacAddress)
		if err != nil || len(hw) != 6 {
			return "", field.Invalid(ifacePath.Child("macAddress"), iface.MacAddress,
				"must be a 48-bit MAC address such as 02:00:00:ab:cd:ef")
		}
		return hw.String(), nil
	}
	if vmi.UID == "" {
		return "", field.Required(ifacePath.Child("macAddress"),
			"the VMI has no UID to derive a MAC address from; set the MAC address")
	}
	sum := sha256.Sum256([]byte("vireo-mac\x00" + string(vmi.UID) + "\x00" + iface.Name))
	hw := net.HardwareAddr{macPrefix, sum[0], sum[1], sum[2], sum[3], sum[4]}
	if hw.String() == reservedMAC {
		hw[5] = 1
	}
	return hw.String(), nil
}
