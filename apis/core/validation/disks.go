package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// diskBuses are the buses a disk or LUN may be attached to (KubeVirt's list).
var diskBuses = []v1.DiskBus{v1.DiskBusVirtio, v1.DiskBusSATA, v1.DiskBusSCSI, v1.DiskBusUSB}

// cdromBuses are the buses a CD-ROM may be attached to; QEMU's q35 machine has no virtio CD-ROM.
var cdromBuses = []v1.DiskBus{v1.DiskBusSATA, v1.DiskBusSCSI, v1.DiskBusUSB}

// diskCaches are the allowed disk cache modes.
var diskCaches = []v1.DriverCache{v1.CacheNone, v1.CacheWriteThrough, v1.CacheWriteBack}

// validateDisk checks how a disk is attached, with KubeVirt's rules: as at most one of disk, lun
// and cdrom; on a bus that kind of device supports; a SATA hard disk not read-only; SCSI
// persistent reservation only on the scsi bus; a well-formed serial number; a known cache mode.
func validateDisk(d *v1.Disk, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	var targets []string
	if d.Disk != nil {
		targets = append(targets, "disk")
		dPath := fldPath.Child("disk")
		errs = append(errs, fieldcheck.OptionalEnum(d.Disk.Bus, diskBuses, dPath.Child("bus"))...)
		if d.Disk.ReadOnly && d.Disk.Bus == v1.DiskBusSATA {
			errs = append(errs, field.Invalid(dPath.Child("readonly"), true,
				"SATA hard disks cannot be read-only; use bus virtio or scsi, or attach the volume as a cdrom"))
		}
	}
	if d.LUN != nil {
		targets = append(targets, "lun")
		lPath := fldPath.Child("lun")
		errs = append(errs, fieldcheck.OptionalEnum(d.LUN.Bus, diskBuses, lPath.Child("bus"))...)
		if d.LUN.Reservation && d.LUN.Bus != v1.DiskBusSCSI {
			errs = append(errs, field.Invalid(lPath.Child("bus"), d.LUN.Bus,
				"SCSI persistent reservation needs the scsi bus; set bus: scsi"))
		}
	}
	if d.CDRom != nil {
		targets = append(targets, "cdrom")
		errs = append(errs, fieldcheck.OptionalEnum(d.CDRom.Bus, cdromBuses, fldPath.Child("cdrom", "bus"))...)
	}
	if len(targets) > 1 {
		errs = append(errs, field.Invalid(fldPath, strings.Join(targets, " and "),
			"a disk is attached as exactly one of disk, lun and cdrom; set only one of them"))
	}
	if d.Serial != "" {
		errs = append(errs, validateSerial(d.Serial, fldPath.Child("serial"))...)
	}
	return append(errs, fieldcheck.OptionalEnum(d.Cache, diskCaches, fldPath.Child("cache"))...)
}

// validateLunVolume checks that a LUN attaches a persistentVolumeClaim or dataVolume volume, the
// only ones that can be passed through as SCSI devices (KubeVirt's rule).
func validateLunVolume(d *v1.Disk, volumes []v1.Volume, fldPath *field.Path) field.ErrorList {
	if d.LUN == nil {
		return nil
	}
	for _, v := range volumes {
		if v.Name == d.Name && v.PersistentVolumeClaim == nil && v.DataVolume == nil {
			return field.ErrorList{field.Invalid(fldPath.Child("lun"), d.Name,
				"a lun can only attach a persistentVolumeClaim or dataVolume volume; attach other volumes as a disk")}
		}
	}
	return nil
}

// validateBootOrder checks the boot orders of disks and interfaces, as KubeVirt does: each at
// least 1, and no two devices (disk or interface) with the same one.
func validateBootOrder(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[uint32]string{}
	check := func(order *uint32, name string, fldPath *field.Path) {
		switch {
		case order == nil:
		case *order < 1:
			errs = append(errs, field.Invalid(fldPath, *order, "must be at least 1; lower values boot first"))
		case seen[*order] != "":
			errs = append(errs, field.Invalid(fldPath, *order, fmt.Sprintf(
				"boot order %d is already used by %s; every disk and interface needs its own", *order, seen[*order])))
		default:
			seen[*order] = name
		}
	}
	devices := &spec.Domain.Devices
	disksPath, ifacesPath := fldPath.Child("domain", "devices", "disks"), fldPath.Child("domain", "devices", "interfaces")
	for i, d := range devices.Disks {
		check(d.BootOrder, fmt.Sprintf("disk %q", d.Name), disksPath.Index(i).Child("bootOrder"))
	}
	for i, iface := range devices.Interfaces {
		check(iface.BootOrder, fmt.Sprintf("interface %q", iface.Name), ifacesPath.Index(i).Child("bootOrder"))
	}
	return errs
}
