package defaults

import (
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// legacyFirmwareUUIDNamespace is the namespace under which KubeVirt derived firmware UUIDs from
// VM names before it stored a random one in each VM. It must never change: guests of such VMs
// would see a new system UUID.
var legacyFirmwareUUIDNamespace = uuid.MustParse("6a1a24a1-4061-4607-8bf4-a3963d0c5895")

// LegacyFirmwareUUID is the name-derived (version 5) firmware UUID KubeVirt gives a VirtualMachine
// that was stored without one, so that such VMs keep the identity their guests have always seen.
func LegacyFirmwareUUID(vmName string) types.UID {
	return types.UID(uuid.NewSHA1(legacyFirmwareUUIDNamespace, []byte(vmName)).String())
}

// setFirmwareUUIDDefault gives a guest that names no SMBIOS UUID a random one, as KubeVirt does.
func setFirmwareUUIDDefault(domain *v1.DomainSpec) {
	if domain.Firmware == nil {
		domain.Firmware = &v1.Firmware{}
	}
	if domain.Firmware.UUID == "" {
		domain.Firmware.UUID = types.UID(uuid.NewString())
	}
}

// SetVirtualMachineIdentity writes a random firmware UUID and serial number into the template of a
// new VirtualMachine, unless the user chose them: every VMI the VM runs then shows its guest the
// same system identity (licences and cloud-init instance checks depend on it), and no two VMs
// share one, even with the same name in another namespace or cluster.
func SetVirtualMachineIdentity(vm *v1.VirtualMachine) {
	if vm.Spec.Template == nil {
		return
	}
	domain := &vm.Spec.Template.Spec.Domain
	setFirmwareUUIDDefault(domain)
	if domain.Firmware.Serial == "" {
		domain.Firmware.Serial = uuid.NewString()
	}
}

// RetainVirtualMachineIdentity keeps, on an update of a VirtualMachine, the firmware UUID and
// serial the server chose at creation when the update leaves them out (as `kubectl apply` of the
// original manifest does). A VM stored before Vireo chose identities (no UUID) gets KubeVirt's
// legacy name-derived UUID, the one its guests have seen so far.
func RetainVirtualMachineIdentity(vm, old *v1.VirtualMachine) {
	if vm.Spec.Template == nil {
		return
	}
	var oldFirmware *v1.Firmware
	if old.Spec.Template != nil {
		oldFirmware = old.Spec.Template.Spec.Domain.Firmware
	}
	domain := &vm.Spec.Template.Spec.Domain
	if domain.Firmware == nil {
		domain.Firmware = &v1.Firmware{}
	}
	switch {
	case domain.Firmware.UUID != "":
	case oldFirmware != nil && oldFirmware.UUID != "":
		domain.Firmware.UUID = oldFirmware.UUID
	default:
		domain.Firmware.UUID = LegacyFirmwareUUID(vm.Name)
	}
	if domain.Firmware.Serial == "" && oldFirmware != nil {
		domain.Firmware.Serial = oldFirmware.Serial
	}
}

// RetainVirtualMachineInstanceIdentity keeps, on an update of a VMI, the firmware UUID the server
// chose at creation when the update leaves it out, so that re-applying an unchanged manifest
// defaults to exactly the stored spec.
func RetainVirtualMachineInstanceIdentity(vmi, old *v1.VirtualMachineInstance) {
	oldFirmware := old.Spec.Domain.Firmware
	if oldFirmware == nil || oldFirmware.UUID == "" {
		return
	}
	if vmi.Spec.Domain.Firmware == nil {
		vmi.Spec.Domain.Firmware = &v1.Firmware{}
	}
	if vmi.Spec.Domain.Firmware.UUID == "" {
		vmi.Spec.Domain.Firmware.UUID = oldFirmware.UUID
	}
}
