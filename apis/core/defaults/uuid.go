package defaults

import (
	"crypto/sha1"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// FirmwareUUIDNamespace is the fixed namespace UUID under which Vireo derives firmware UUIDs from
// object names. Changing it would change the SMBIOS UUID of every guest created afterwards.
const FirmwareUUIDNamespace = "48902890-f957-42c4-8bb8-d8dbcca617a0"

// firmwareUUIDNamespaceBytes is FirmwareUUIDNamespace as its 16 bytes.
var firmwareUUIDNamespaceBytes = [16]byte{
	0x48, 0x90, 0x28, 0x90, 0xf9, 0x57, 0x42, 0xc4,
	0x8b, 0xb8, 0xd8, 0xdb, 0xcc, 0xa6, 0x17, 0xa0,
}

// FirmwareUUID returns the name-based (version 5, SHA-1) UUID of name under FirmwareUUIDNamespace:
// the firmware UUID a VMI named name gets when it sets none.
func FirmwareUUID(name string) types.UID {
	h := sha1.New()
	h.Write(firmwareUUIDNamespaceBytes[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]))
}
