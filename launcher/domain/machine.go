package domain

import (
	"bufio"
	"fmt"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// defaultMachineType is the machine type of a VMI that names none (KubeVirt's amd64 default).
const defaultMachineType = "q35"

// machinePatterns are the machine types Vireo runs: the q35 family, as the API server allows.
var machinePatterns = []string{"q35*", "pc-q35*"}

// SMBIOS system strings: KubeVirt's, so guest tools that recognise KubeVirt guests (virt-what,
// cloud-init ds-identify) recognise Vireo's.
const (
	smbiosManufacturer = "KubeVirt"
	smbiosProduct      = "None"
	smbiosFamily       = "KubeVirt"
)

// MachineTypes maps each machine type QEMU accepts to the versioned type it stands for: an
// alias such as "q35" to "pc-q35-7.2", and a versioned type to itself.
type MachineTypes map[string]string

// ParseMachineHelp reads the output of `qemu-system-x86_64 -machine help`, whose lines look like
//
//	q35                  Standard PC (Q35 + ICH9, 2009) (alias of pc-q35-7.2)
//	pc-q35-7.2           Standard PC (Q35 + ICH9, 2009)
//
// The launcher runs the command once; Build stays free of processes.
func ParseMachineHelp(out string) MachineTypes {
	types := MachineTypes{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasSuffix(line, ":") {
			continue
		}
		name := fields[0]
		target := name
		if i := strings.Index(line, "(alias of "); i >= 0 {
			rest := line[i+len("(alias of "):]
			if j := strings.Index(rest, ")"); j > 0 {
				target = rest[:j]
			}
		}
		types[name] = target
	}
	return types
}

// machineType returns the machine type the domain names: the VMI's (q35 when unset), expanded
// to its versioned form when the launcher gave the node's machine types.
func machineType(spec *v1.VirtualMachineInstanceSpec, types MachineTypes, specPath *field.Path) (string, field.ErrorList) {
	var errs field.ErrorList
	if spec.Architecture != "" && spec.Architecture != "amd64" {
		errs = append(errs, field.NotSupported(specPath.Child("architecture"), spec.Architecture, []string{"amd64"}))
	}
	mPath := specPath.Child("domain", "machine", "type")
	t := defaultMachineType
	if m := spec.Domain.Machine; m != nil && m.Type != "" {
		t = m.Type
	}
	if !matchesAny(t, machinePatterns) {
		return "", append(errs, field.Invalid(mPath, t,
			"Vireo runs q35 machines only; use q35 or a versioned pc-q35-* type"))
	}
	if types == nil {
		return t, errs
	}
	versioned, ok := types[t]
	if !ok {
		return "", append(errs, field.Invalid(mPath, t,
			"this node's QEMU has no such machine type; it offers "+strings.Join(q35Types(types), ", ")))
	}
	return versioned, errs
}

// q35Types lists the q35 machine types in types, sorted, for messages.
func q35Types(types MachineTypes) []string {
	var names []string
	for name := range types {
		if matchesAny(name, machinePatterns) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// matchesAny reports whether name matches one of the glob patterns.
func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// machineOS returns the <os> element: architecture and machine type, SMBIOS from <sysinfo>,
// SeaBIOS options or EFI firmware, and the kernel, initrd and command line of a direct kernel
// boot.
func machineOS(spec *v1.VirtualMachineInstanceSpec, in Inputs, specPath *field.Path) (*libvirtxml.DomainOS, field.ErrorList) {
	machine, errs := machineType(spec, in.MachineTypes, specPath)
	osElem := &libvirtxml.DomainOS{
		Type:   &libvirtxml.DomainOSType{Arch: "x86_64", Machine: machine, Type: "hvm"},
		SMBios: &libvirtxml.DomainSMBios{Mode: "sysinfo"},
	}
	fw := spec.Domain.Firmware
	if fw == nil {
		return osElem, errs
	}
	fwPath := specPath.Child("domain", "firmware")
	if fw.Serial != "" && (len(fw.Serial) > maxSerialLength || !serialPattern.MatchString(fw.Serial)) {
		errs = append(errs, field.Invalid(fwPath.Child("serial"), fw.Serial, "must be at most 256 characters from [A-Za-z0-9_.+-]"))
	}
	if bl := fw.Bootloader; bl != nil {
		if bl.EFI != nil {
			efiFirmware(osElem, bl.EFI)
		}
		if bl.BIOS != nil && boolOr(bl.BIOS.UseSerial, false) {
			if !boolOr(spec.Domain.Devices.AutoattachSerialConsole, true) {
				errs = append(errs, field.Invalid(fwPath.Child("bootloader", "bios", "useSerial"), true,
					"the BIOS can only print to the serial console when there is one; "+
						"remove autoattachSerialConsole: false or useSerial"))
			}
			osElem.BIOS = &libvirtxml.DomainBIOS{UseSerial: "yes"}
		}
	}
	if kb := fw.KernelBoot; kb != nil {
		errs = append(errs, kernelBoot(osElem, kb, in.KernelBoot, fwPath.Child("kernelBoot"))...)
	}
	return osElem, errs
}

// kernelBoot sets the kernel, initrd and command line of a direct kernel boot from the files
// the node agent extracted from the kernel boot container.
func kernelBoot(osElem *libvirtxml.DomainOS, kb *v1.KernelBoot, files *KernelBootFiles, kbPath *field.Path) field.ErrorList {
	c := kb.Container
	if c == nil {
		if kb.KernelArgs != "" {
			return field.ErrorList{field.Required(kbPath.Child("container"),
				"kernelArgs need a kernel: set kernelBoot.container with the image holding it")}
		}
		return nil
	}
	cPath := kbPath.Child("container")
	var errs field.ErrorList
	if c.KernelPath == "" {
		return field.ErrorList{field.Required(cPath.Child("kernelPath"),
			"direct kernel boot needs a kernel; an initrd alone cannot be booted")}
	}
	if files == nil || files.Kernel == "" {
		errs = append(errs, field.InternalError(cPath.Child("kernelPath"),
			fmt.Errorf("kernel %s of image %s was not extracted (the node agent extracts it; is it older than the launcher?)", c.KernelPath, c.Image)))
	} else {
		osElem.Kernel = files.Kernel
	}
	if c.InitrdPath != "" {
		if files == nil || files.Initrd == "" {
			errs = append(errs, field.InternalError(cPath.Child("initrdPath"),
				fmt.Errorf("initrd %s of image %s was not extracted (the node agent extracts it; is it older than the launcher?)", c.InitrdPath, c.Image)))
		} else {
			osElem.Initrd = files.Initrd
		}
	}
	osElem.Cmdline = kb.KernelArgs
	return errs
}

// sysInfo returns the SMBIOS system information the guest sees: KubeVirt's manufacturer,
// product and family strings, the firmware UUID and, when set, the firmware serial number.
func sysInfo(spec *v1.VirtualMachineInstanceSpec, uuid string) []libvirtxml.DomainSysInfo {
	entries := []libvirtxml.DomainSysInfoEntry{
		{Name: "manufacturer", Value: smbiosManufacturer},
		{Name: "product", Value: smbiosProduct},
		{Name: "family", Value: smbiosFamily},
	}
	if uuid != "" {
		entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: "uuid", Value: uuid})
	}
	if fw := spec.Domain.Firmware; fw != nil && fw.Serial != "" {
		entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: "serial", Value: fw.Serial})
	}
	return []libvirtxml.DomainSysInfo{{SMBIOS: &libvirtxml.DomainSysInfoSMBIOS{
		System: &libvirtxml.DomainSysInfoSystem{Entry: entries},
	}}}
}

// efiFirmware boots the guest with OVMF, which libvirt picks from the firmware descriptors QEMU's
// packages install: with secure boot (KubeVirt's default; validation has made sure SMM is on)
// the firmware that has Microsoft's keys enrolled, else one without secure boot. Its variable
// store (NVRAM) is made from the firmware's template in the launcher's private directory when
// the guest starts, so it lasts as long as the VMI.
func efiFirmware(osElem *libvirtxml.DomainOS, efi *v1.EFI) {
	secure := boolOr(efi.SecureBoot, true)
	state := "no"
	if secure {
		state = "yes"
		osElem.Loader = &libvirtxml.DomainLoader{Secure: "yes"}
	}
	osElem.Firmware = "efi"
	osElem.FirmwareInfo = &libvirtxml.DomainOSFirmwareInfo{Features: []libvirtxml.DomainOSFirmwareFeature{
		{Enabled: state, Name: "secure-boot"},
		{Enabled: state, Name: "enrolled-keys"},
	}}
}
