// Package domain turns a VirtualMachineInstance into the libvirt domain that runs it. The
// conversion is pure and deterministic: everything that depends on the node (emulation mode,
// socket paths, prepared disk files, the QEMU machine types) is resolved by the launcher first
// and passed in as Inputs, so the same VMI and Inputs always give the same XML. Each device
// class has its own file and its own function; a field that Vireo cannot honour is an error
// naming its path (such as spec.domain.devices.disks[1].bootOrder), never silently dropped.
package domain

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/podnetwork"
)

// Emulation is how QEMU runs the guest's CPUs.
type Emulation string

const (
	// EmulationKVM uses hardware virtualization through /dev/kvm (libvirt domain type "kvm").
	EmulationKVM Emulation = "kvm"
	// EmulationTCG is QEMU's software emulation (libvirt domain type "qemu"), for nodes without
	// a usable /dev/kvm. The VMI then carries the SoftwareEmulation condition.
	EmulationTCG Emulation = "tcg"
)

// Disk formats a DiskSource may have.
const (
	// FormatRaw is a plain disk image or block device.
	FormatRaw = "raw"
	// FormatQCOW2 is a QEMU copy-on-write image, such as a containerDisk overlay or an emptyDisk.
	FormatQCOW2 = "qcow2"
)

// DiskSource is a volume as the launcher prepared it on the node (see package launcher/disks).
type DiskSource struct {
	// Path is the absolute path of the image file, or of the device when Block is set.
	Path string
	// Format is FormatRaw or FormatQCOW2, as detected from the file's contents.
	Format string
	// Block says Path is a block device (a block-mode PVC) rather than a file.
	Block bool
	// ReadOnly says the volume itself is read-only (such as a PVC with readOnly: true); the disk
	// is then attached read-only whatever the disk says.
	ReadOnly bool
	// DirectIO says the file's filesystem supports O_DIRECT, so cache mode "none" works. It
	// decides the default cache mode (none when supported, else writethrough, as KubeVirt does).
	DirectIO bool
}

// KernelBootFiles are the kernel and initrd of spec.domain.firmware.kernelBoot, in their
// container image, which the launcher Pod mounts as an image volume; QEMU reads them there.
type KernelBootFiles struct {
	// Kernel is the path of the kernel image; required when kernelBoot.container.kernelPath is set.
	Kernel string
	// Initrd is the path of the initrd; required when kernelBoot.container.initrdPath is set.
	Initrd string
}

// Inputs are what the launcher resolved for one VMI on its node before building its domain.
type Inputs struct {
	// Emulation is KVM or TCG; the launcher picks KVM only where /dev/kvm works and the CPU has
	// vmx or svm.
	Emulation Emulation
	// TCGCacheMiB bounds QEMU's translation-block cache under TCG (<features><tcg><tb-cache>);
	// 0 keeps QEMU's default. Ignored under KVM, which has no such cache.
	TCGCacheMiB uint
	// MachineTypes maps machine type aliases (such as q35) to the versioned types they stand
	// for (pc-q35-7.2), as ParseMachineHelp reads them from `qemu-system-x86_64 -machine help`.
	// When set, the domain names the versioned type, so a migration target keeps the same
	// machine; when nil, the VMI's machine type is passed through for libvirt to expand.
	MachineTypes MachineTypes
	// ConsoleSocket is the path of the unix socket QEMU binds for the serial console; required
	// unless spec.domain.devices.autoattachSerialConsole is false.
	ConsoleSocket string
	// VNCSocket is the path of the unix socket QEMU binds for the VNC display; required unless
	// spec.domain.devices.autoattachGraphicsDevice is false.
	VNCSocket string
	// AgentSocket is the path of the unix socket QEMU binds for the guest agent's channel,
	// which only libvirt connects to; required.
	AgentSocket string
	// Disks are the prepared volumes, by volume name.
	Disks map[string]DiskSource
	// KernelBoot holds the extracted kernel and initrd when the VMI boots a kernel directly.
	KernelBoot *KernelBootFiles
	// TapDevice is the tap device the guest's NIC is connected to; podnetwork.Tap when empty.
	TapDevice string
}

// Fixed fields of every domain. The poweroff, reboot and crash actions are libvirt's
// defaults, written out so that the XML says what happens.
const (
	onPoweroff = "destroy"
	onReboot   = "restart"
	onCrash    = "destroy"
)

// Build returns the libvirt domain that runs vmi on this node. vmi should have been defaulted
// and validated by the API server, but Build checks again what it relies on, so nothing in the
// VMI can make it panic; all problems are returned together, each naming its field.
func Build(vmi *v1.VirtualMachineInstance, in Inputs) (*libvirtxml.Domain, error) {
	if vmi == nil {
		return nil, errors.New("domain.Build: no VirtualMachineInstance given")
	}
	spec := &vmi.Spec
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	domainType, err := domainType(in.Emulation)
	if err != nil {
		return nil, err
	}
	uuid, uuidErrs := firmwareUUID(vmi)
	errs = append(errs, uuidErrs...)
	errs = append(errs, bootOrders(spec, specPath)...)

	d := &libvirtxml.Domain{
		Type:       domainType,
		Name:       DomainName(vmi),
		UUID:       uuid,
		OnPoweroff: onPoweroff,
		OnReboot:   onReboot,
		OnCrash:    onCrash,
		Devices:    &libvirtxml.DomainDeviceList{},
	}
	var e field.ErrorList
	d.OS, e = machineOS(spec, in, specPath)
	errs = append(errs, e...)
	d.SysInfo = sysInfo(spec, uuid)
	d.VCPU, d.CPU, e = cpu(&spec.Domain, in.Emulation, specPath.Child("domain"))
	errs = append(errs, e...)
	d.Memory, e = memory(&spec.Domain, specPath.Child("domain"))
	errs = append(errs, e...)
	d.Features, e = features(&spec.Domain, in, specPath.Child("domain", "features"))
	errs = append(errs, e...)
	d.Clock, e = clock(spec.Domain.Clock, in.Emulation, specPath.Child("domain", "clock"))
	errs = append(errs, e...)

	dev := d.Devices
	var diskCtrls []libvirtxml.DomainController
	dev.Disks, diskCtrls, e = disks(spec, in.Disks, specPath)
	errs = append(errs, e...)
	tap := in.TapDevice
	if tap == "" {
		tap = podnetwork.Tap
	}
	var nic *libvirtxml.DomainInterface
	nic, e = network(vmi, tap, specPath)
	errs = append(errs, e...)
	if nic != nil {
		dev.Interfaces = []libvirtxml.DomainInterface{*nic}
	}
	var con consoleDevices
	con, e = consoles(&spec.Domain.Devices, in, specPath.Child("domain", "devices"))
	errs = append(errs, e...)
	dev.Serials, dev.Consoles, dev.Graphics, dev.Videos = con.serials, con.consoles, con.graphics, con.videos
	dev.Channels = con.channels
	misc := miscDevices(&spec.Domain.Devices, dev.Disks)
	dev.Controllers = append(misc.controllers, diskCtrls...)
	dev.RNGs, dev.MemBalloon = misc.rngs, misc.memBalloon
	if len(errs) > 0 {
		return nil, fmt.Errorf("VirtualMachineInstance %s/%s cannot run: %w", vmi.Namespace, vmi.Name, errs.ToAggregate())
	}
	return d, nil
}

// bootOrders checks that no two disks or interfaces share a boot order: libvirt only sees
// the disks' orders, and QEMU would refuse a clash with an interface's only at start.
func bootOrders(spec *v1.VirtualMachineInstanceSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[uint32]string{}
	check := func(order *uint32, who string, p *field.Path) {
		if order == nil {
			return
		}
		if other, ok := seen[*order]; ok {
			errs = append(errs, field.Invalid(p, *order, fmt.Sprintf(
				"boot order %d is already used by %s; every disk and interface needs its own", *order, other)))
			return
		}
		seen[*order] = who
	}
	devPath := specPath.Child("domain", "devices")
	for i, d := range spec.Domain.Devices.Disks {
		check(d.BootOrder, fmt.Sprintf("disk %q", d.Name), devPath.Child("disks").Index(i).Child("bootOrder"))
	}
	for i, iface := range spec.Domain.Devices.Interfaces {
		check(iface.BootOrder, fmt.Sprintf("interface %q", iface.Name), devPath.Child("interfaces").Index(i).Child("bootOrder"))
	}
	return errs
}

// domainType returns libvirt's domain type for emulation.
func domainType(emulation Emulation) (string, error) {
	switch emulation {
	case EmulationKVM:
		return "kvm", nil
	case EmulationTCG:
		return "qemu", nil
	}
	return "", fmt.Errorf("domain.Build: Inputs.Emulation must be %q or %q, not %q", EmulationKVM, EmulationTCG, emulation)
}

// DomainName is the libvirt domain name of vmi: KubeVirt's "<namespace>_<name>". Namespaces
// and names cannot contain '_', so the name is unique and can be split again.
func DomainName(vmi *v1.VirtualMachineInstance) string {
	return vmi.Namespace + "_" + vmi.Name
}

// Marshal returns d as indented XML, the form libvirt's define call takes.
func Marshal(d *libvirtxml.Domain) (string, error) {
	if d == nil {
		return "", errors.New("domain.Marshal: no domain given")
	}
	return d.Marshal()
}

// boolOr returns *b, or def when b is nil.
func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// uintPtr returns a pointer to n.
func uintPtr(n uint) *uint { return &n }
