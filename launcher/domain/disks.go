package domain

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// defaultDiskBus is the bus of a disk or CD-ROM that names none (KubeVirt's amd64 default).
const defaultDiskBus = v1.DiskBusSATA

// aliasPrefix starts user-chosen device aliases; libvirt requires it ("ua-"), and KubeVirt's
// devices carry the same aliases, so tools that find a disk by alias keep working.
const aliasPrefix = "ua-"

// maxSerialLength is the longest disk serial number libvirt accepts from KubeVirt.
const maxSerialLength = 256

// serialPattern is what a disk serial number may consist of.
var serialPattern = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)

// diskBusPrefixes are the libvirt target device prefixes per bus; sata, scsi and usb disks all
// appear as sdX and share one sequence.
var diskBusPrefixes = map[v1.DiskBus]string{
	v1.DiskBusVirtio: "vd",
	v1.DiskBusSATA:   "sd",
	v1.DiskBusSCSI:   "sd",
	v1.DiskBusUSB:    "sd",
}

// diskAttachment is what one disk of the VMI resolved to before it becomes XML.
type diskAttachment struct {
	disk     *v1.Disk
	path     *field.Path
	bus      v1.DiskBus
	cdrom    bool
	readOnly bool
	trayOpen bool
}

// disks returns the <disk> elements of the VMI's disks, in the VMI's order, and the
// controllers they need (virtio-scsi for the scsi bus; SATA is built into q35, and the USB
// controller is added with the other USB devices). Each disk attaches the volume of its name
// as the launcher prepared it in sources.
func disks(spec *v1.VirtualMachineInstanceSpec, sources map[string]DiskSource, specPath *field.Path) ([]libvirtxml.DomainDisk, []libvirtxml.DomainController, field.ErrorList) {
	var errs field.ErrorList
	var out []libvirtxml.DomainDisk
	next := map[string]int{}
	scsi := false
	disksPath := specPath.Child("domain", "devices", "disks")
	for i := range spec.Domain.Devices.Disks {
		d := &spec.Domain.Devices.Disks[i]
		a, e := attachment(d, disksPath.Index(i))
		errs = append(errs, e...)
		if a == nil {
			continue
		}
		src, e := diskSource(spec, d.Name, sources, a, specPath)
		errs = append(errs, e...)
		prefix := diskBusPrefixes[a.bus]
		dev := prefix + diskLetters(next[prefix])
		next[prefix]++
		scsi = scsi || a.bus == v1.DiskBusSCSI
		disk, e := diskXML(a, src, dev)
		errs = append(errs, e...)
		out = append(out, disk)
	}
	var ctrls []libvirtxml.DomainController
	if scsi {
		ctrls = append(ctrls, libvirtxml.DomainController{Type: "scsi", Index: uintPtr(0), Model: "virtio-scsi"})
	}
	return out, ctrls, errs
}

// attachment checks how disk d is attached: as a disk or CD-ROM (LUNs are refused), on which
// bus, read-only or not.
func attachment(d *v1.Disk, dPath *field.Path) (*diskAttachment, field.ErrorList) {
	a := &diskAttachment{disk: d, path: dPath, bus: defaultDiskBus}
	var errs field.ErrorList
	if msgs := validation.IsDNS1123Label(d.Name); len(msgs) > 0 {
		// The name becomes the device alias ua-<name>, which QEMU sees as an id.
		return nil, field.ErrorList{field.Invalid(dPath.Child("name"), d.Name, strings.Join(msgs, "; "))}
	}
	switch {
	case d.LUN != nil:
		return nil, field.ErrorList{field.Forbidden(dPath.Child("lun"),
			"Vireo's launcher does not pass volumes through as SCSI LUNs yet; attach the volume as a disk")}
	case d.CDRom != nil:
		a.cdrom = true
		if d.CDRom.Bus != "" {
			a.bus = d.CDRom.Bus
		}
		errs = append(errs, checkEnum(string(a.bus), dPath.Child("cdrom", "bus"), "sata", "scsi", "usb")...)
		if !boolOr(d.CDRom.ReadOnly, true) {
			errs = append(errs, field.Invalid(dPath.Child("cdrom", "readonly"), false,
				"QEMU's CD-ROM drives are read-only; attach the volume as a disk to write to it"))
		}
		a.readOnly = true
		a.trayOpen = d.CDRom.Tray == v1.TrayStateOpen
		errs = append(errs, checkEnum(string(d.CDRom.Tray), dPath.Child("cdrom", "tray"), "open", "closed")...)
	default:
		if d.Disk != nil {
			if d.Disk.Bus != "" {
				a.bus = d.Disk.Bus
			}
			a.readOnly = d.Disk.ReadOnly
		}
		errs = append(errs, checkEnum(string(a.bus), dPath.Child("disk", "bus"), "virtio", "sata", "scsi", "usb")...)
	}
	if d.Serial != "" && (len(d.Serial) > maxSerialLength || !serialPattern.MatchString(d.Serial)) {
		errs = append(errs, field.Invalid(dPath.Child("serial"), d.Serial,
			"must be at most 256 characters from [A-Za-z0-9_.+-]"))
	}
	if d.BootOrder != nil && *d.BootOrder < 1 {
		errs = append(errs, field.Invalid(dPath.Child("bootOrder"), *d.BootOrder, "must be at least 1; lower values boot first"))
	}
	errs = append(errs, checkEnum(string(d.Cache), dPath.Child("cache"), "none", "writethrough", "writeback")...)
	if len(errs) > 0 {
		return nil, errs
	}
	return a, nil
}

// diskSource finds the prepared source of the volume that disk name attaches. A CD-ROM with an
// open tray has no medium and needs none. A read-only volume makes the disk read-only, which
// SATA hard disks cannot be.
func diskSource(spec *v1.VirtualMachineInstanceSpec, name string, sources map[string]DiskSource, a *diskAttachment, specPath *field.Path) (*DiskSource, field.ErrorList) {
	volIndex := -1
	for j := range spec.Volumes {
		if spec.Volumes[j].Name == name {
			volIndex = j
			break
		}
	}
	if volIndex < 0 {
		return nil, field.ErrorList{field.Invalid(a.path.Child("name"), name, fmt.Sprintf(
			"no volume named %q in spec.volumes; every disk must attach a volume of the same name", name))}
	}
	vPath := specPath.Child("volumes").Index(volIndex)
	if spec.Volumes[volIndex].HostDisk != nil {
		return nil, field.ErrorList{field.Forbidden(vPath.Child("hostDisk"),
			"Vireo's launcher does not attach host disks yet; use a persistentVolumeClaim or dataVolume")}
	}
	if a.trayOpen {
		return nil, nil
	}
	src, ok := sources[name]
	if !ok {
		return nil, field.ErrorList{field.InternalError(vPath, fmt.Errorf(
			"the launcher prepared no disk for volume %q", name))}
	}
	var errs field.ErrorList
	if !filepath.IsAbs(src.Path) {
		errs = append(errs, field.InternalError(vPath, fmt.Errorf("volume %q: prepared path %q is not absolute", name, src.Path)))
	}
	if src.Format != FormatRaw && src.Format != FormatQCOW2 {
		errs = append(errs, field.InternalError(vPath, fmt.Errorf("volume %q: prepared format %q is neither raw nor qcow2", name, src.Format)))
	}
	if src.ReadOnly && !a.readOnly {
		if a.bus == v1.DiskBusSATA {
			errs = append(errs, field.Invalid(a.path.Child("disk", "bus"), string(a.bus), fmt.Sprintf(
				"volume %q is read-only, and SATA hard disks cannot be; use bus virtio or scsi, or attach it as a cdrom", name)))
		}
		a.readOnly = true
	}
	return &src, errs
}

// diskXML returns the <disk> element of attachment a with source src (nil for an empty
// CD-ROM) as target device dev. The cache mode defaults to none where the volume's filesystem
// supports direct I/O and writethrough elsewhere, as in KubeVirt.
func diskXML(a *diskAttachment, src *DiskSource, dev string) (libvirtxml.DomainDisk, field.ErrorList) {
	var errs field.ErrorList
	d := a.disk
	out := libvirtxml.DomainDisk{
		Device: "disk",
		Target: &libvirtxml.DomainDiskTarget{Dev: dev, Bus: string(a.bus)},
		Serial: d.Serial,
		Alias:  &libvirtxml.DomainAlias{Name: aliasPrefix + d.Name},
	}
	if a.cdrom {
		out.Device = "cdrom"
		if a.trayOpen {
			out.Target.Tray = "open"
		}
	}
	if a.readOnly {
		out.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	}
	if d.BootOrder != nil {
		out.Boot = &libvirtxml.DomainDeviceBoot{Order: uint(*d.BootOrder)}
	}
	if src == nil {
		return out, errs
	}
	cache := string(d.Cache)
	switch {
	case cache == "" && src.DirectIO:
		cache = string(v1.CacheNone)
	case cache == "":
		cache = string(v1.CacheWriteThrough)
	case cache == string(v1.CacheNone) && !src.DirectIO:
		errs = append(errs, field.Invalid(a.path.Child("cache"), cache,
			"the volume's filesystem does not support direct I/O, which cache mode none needs; use writethrough or writeback"))
	}
	out.Driver = &libvirtxml.DomainDiskDriver{Name: "qemu", Type: src.Format, Cache: cache}
	if src.Block {
		out.Source = &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: src.Path}}
	} else {
		out.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: src.Path}}
	}
	return out, errs
}

// diskLetters returns the letters of the n-th disk of a prefix: a..z, then aa, ab, ... as
// libvirt and Linux count them.
func diskLetters(n int) string {
	s := ""
	for n >= 0 {
		s = string(rune('a'+n%26)) + s
		n = n/26 - 1
	}
	return s
}
