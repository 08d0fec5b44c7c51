package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// Preference fills what spec leaves unset with the preference's values, and adds its
// annotations to meta where meta has none of that key. As KubeVirt does, the devices the VMI
// would get by default (a disk per volume, the pod network's interface, unless the autoattach
// preferences say otherwise) are added first, so that the preference reaches them too.
func Preference(p *v1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec, meta *metav1.ObjectMeta) {
	if p.Devices != nil {
		setBool(&spec.Domain.Devices.AutoattachPodInterface, p.Devices.PreferredAutoattachPodInterface)
	}
	defaults.AddVolumeDisks(spec)
	defaults.SetPodNetworkDefaults(spec)
	if p.CPU != nil && len(p.CPU.PreferredCPUFeatures) > 0 {
		cpuFeatures(p.CPU.PreferredCPUFeatures, spec)
	}
	if p.Devices != nil {
		devices(p.Devices, spec)
	}
	if p.Features != nil {
		features(p.Features, spec)
	}
	if p.Firmware != nil {
		firmware(p.Firmware, spec)
	}
	if p.Machine != nil && p.Machine.PreferredMachineType != "" {
		if spec.Domain.Machine == nil {
			spec.Domain.Machine = &v1.Machine{}
		}
		setString(&spec.Domain.Machine.Type, p.Machine.PreferredMachineType)
	}
	if p.Clock != nil {
		clock(p.Clock, spec)
	}
	if p.PreferredSubdomain != nil {
		setString(&spec.Subdomain, *p.PreferredSubdomain)
	}
	if p.PreferredTerminationGracePeriodSeconds != nil && spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = new(*p.PreferredTerminationGracePeriodSeconds)
	}
	if p.PreferredArchitecture != nil {
		setString(&spec.Architecture, *p.PreferredArchitecture)
	}
	if p.PreferredLaunchSecurity != nil && spec.Domain.LaunchSecurity == nil {
		spec.Domain.LaunchSecurity = p.PreferredLaunchSecurity.DeepCopy()
	}
	annotations(p.Annotations, meta, false)
}

func setString[T ~string](dst *T, value T) {
	if *dst == "" {
		*dst = value
	}
}

func setBool(dst **bool, value *bool) {
	if *dst == nil && value != nil {
		*dst = new(*value)
	}
}

func cpuFeatures(preferred []v1.CPUFeature, spec *v1.VirtualMachineInstanceSpec) {
	if spec.Domain.CPU == nil {
		spec.Domain.CPU = &v1.CPU{}
	}
	named := map[string]bool{}
	for _, f := range spec.Domain.CPU.Features {
		named[f.Name] = true
	}
	for _, f := range preferred {
		if !named[f.Name] {
			spec.Domain.CPU.Features = append(spec.Domain.CPU.Features, f)
		}
	}
}

func devices(p *v1beta1.DevicePreferences, spec *v1.VirtualMachineInstanceSpec) {
	d := &spec.Domain.Devices
	setBool(&d.AutoattachGraphicsDevice, p.PreferredAutoattachGraphicsDevice)
	setBool(&d.AutoattachMemBalloon, p.PreferredAutoattachMemBalloon)
	setBool(&d.AutoattachPodInterface, p.PreferredAutoattachPodInterface)
	setBool(&d.AutoattachSerialConsole, p.PreferredAutoattachSerialConsole)
	setBool(&d.AutoattachInputDevice, p.PreferredAutoattachInputDevice)
	setBool(&d.UseVirtioTransitional, p.PreferredUseVirtioTransitional)
	setBool(&d.BlockMultiQueue, p.PreferredBlockMultiQueue)
	setBool(&d.NetworkInterfaceMultiQueue, p.PreferredNetworkInterfaceMultiQueue)
	if p.PreferredDisableHotplug != nil && !d.DisableHotplug {
		d.DisableHotplug = *p.PreferredDisableHotplug
	}
	if p.PreferredRng != nil && d.Rng == nil {
		d.Rng = p.PreferredRng.DeepCopy()
	}
	if p.PreferredTPM != nil && d.TPM == nil {
		d.TPM = p.PreferredTPM.DeepCopy()
	}
	if p.PreferredSoundModel != "" && d.Sound != nil {
		setString(&d.Sound.Model, p.PreferredSoundModel)
	}
	if p.PreferredVideoType != nil && d.Video == nil {
		d.Video = &v1.VideoDevice{Type: *p.PreferredVideoType}
	}
	if p.PreferredVirtualGPUOptions != nil {
		for i := range d.GPUs {
			if d.GPUs[i].VirtualGPUOptions == nil {
				d.GPUs[i].VirtualGPUOptions = p.PreferredVirtualGPUOptions.DeepCopy()
			}
		}
	}
	if p.PreferredPanicDeviceModel != nil {
		for i := range d.PanicDevices {
			if d.PanicDevices[i].Model == nil {
				d.PanicDevices[i].Model = new(*p.PreferredPanicDeviceModel)
			}
		}
	}
	for i := range d.Inputs {
		setString(&d.Inputs[i].Bus, p.PreferredInputBus)
		setString(&d.Inputs[i].Type, p.PreferredInputType)
	}
	for i := range d.Disks {
		disk(p, &d.Disks[i])
	}
	for i := range d.Interfaces {
		iface(p, &d.Interfaces[i], spec)
	}
}

// disk fills a disk's bus (by its kind), cache, I/O mode, block size and I/O thread; a disk of
// no kind is a disk.
func disk(p *v1beta1.DevicePreferences, d *v1.Disk) {
	if d.Disk == nil && d.CDRom == nil && d.LUN == nil {
		d.Disk = &v1.DiskTarget{}
	}
	switch {
	case d.Disk != nil:
		setString(&d.Disk.Bus, p.PreferredDiskBus)
		setString(&d.Cache, p.PreferredDiskCache)
		setString(&d.IO, p.PreferredDiskIO)
		if p.PreferredDiskBlockSize != nil && d.BlockSize == nil {
			d.BlockSize = p.PreferredDiskBlockSize.DeepCopy()
		}
		if d.Disk.Bus == v1.DiskBusVirtio {
			setBool(&d.DedicatedIOThread, p.PreferredDiskDedicatedIoThread)
		}
	case d.CDRom != nil:
		setString(&d.CDRom.Bus, p.PreferredCdromBus)
	case d.LUN != nil:
		setString(&d.LUN.Bus, p.PreferredLunBus)
	}
}

// iface fills an interface's model and, on the pod network without a binding, masquerade.
func iface(p *v1beta1.DevicePreferences, i *v1.Interface, spec *v1.VirtualMachineInstanceSpec) {
	setString(&i.Model, p.PreferredInterfaceModel)
	if p.PreferredInterfaceMasquerade == nil || i.Binding != nil || i.InterfaceBindingMethod != (v1.InterfaceBindingMethod{}) {
		return
	}
	for _, n := range spec.Networks {
		if n.Name == i.Name && n.Pod != nil {
			i.Masquerade = p.PreferredInterfaceMasquerade.DeepCopy()
		}
	}
}

func features(p *v1beta1.FeaturePreferences, spec *v1.VirtualMachineInstanceSpec) {
	if spec.Domain.Features == nil {
		spec.Domain.Features = &v1.Features{}
	}
	f := spec.Domain.Features
	if p.PreferredAcpi != nil && f.ACPI == (v1.FeatureState{}) {
		f.ACPI = *p.PreferredAcpi.DeepCopy()
	}
	if p.PreferredApic != nil && f.APIC == nil {
		f.APIC = p.PreferredApic.DeepCopy()
	}
	if p.PreferredHyperv != nil && f.Hyperv == nil {
		f.Hyperv = p.PreferredHyperv.DeepCopy()
	}
	if p.PreferredKvm != nil && f.KVM == nil {
		f.KVM = p.PreferredKvm.DeepCopy()
	}
	if p.PreferredPvspinlock != nil && f.Pvspinlock == nil {
		f.Pvspinlock = p.PreferredPvspinlock.DeepCopy()
	}
	if p.PreferredSmm != nil && f.SMM == nil {
		f.SMM = p.PreferredSmm.DeepCopy()
	}
	if *f == (v1.Features{}) {
		spec.Domain.Features = nil
	}
}

// firmware picks BIOS or EFI where the VM picks neither, and fills their options.
func firmware(p *v1beta1.FirmwarePreferences, spec *v1.VirtualMachineInstanceSpec) {
	if spec.Domain.Firmware == nil {
		spec.Domain.Firmware = &v1.Firmware{}
	}
	fw := spec.Domain.Firmware
	if fw.Bootloader == nil {
		fw.Bootloader = &v1.Bootloader{}
	}
	b := fw.Bootloader
	neither := b.BIOS == nil && b.EFI == nil
	switch {
	case neither && p.PreferredUseBios != nil && *p.PreferredUseBios:
		b.BIOS = &v1.BIOS{}
	case neither && p.PreferredEfi != nil:
		b.EFI = p.PreferredEfi.DeepCopy()
	case neither && p.DeprecatedPreferredUseEfi != nil && *p.DeprecatedPreferredUseEfi:
		b.EFI = &v1.EFI{}
	}
	if b.BIOS != nil {
		setBool(&b.BIOS.UseSerial, p.PreferredUseBiosSerial)
	}
	if b.EFI != nil && p.PreferredEfi == nil {
		setBool(&b.EFI.SecureBoot, p.DeprecatedPreferredUseSecureBoot)
	}
	if b.BIOS == nil && b.EFI == nil {
		fw.Bootloader = nil
	}
	if *fw == (v1.Firmware{}) {
		spec.Domain.Firmware = nil
	}
}

func clock(p *v1beta1.ClockPreferences, spec *v1.VirtualMachineInstanceSpec) {
	if spec.Domain.Clock == nil {
		spec.Domain.Clock = &v1.Clock{}
	}
	c := spec.Domain.Clock
	if p.PreferredClockOffset != nil && c.ClockOffset == (v1.ClockOffset{}) {
		c.ClockOffset = *p.PreferredClockOffset.DeepCopy()
	}
	if p.PreferredTimer != nil && c.Timer == nil {
		c.Timer = p.PreferredTimer.DeepCopy()
	}
	if *c == (v1.Clock{}) {
		spec.Domain.Clock = nil
	}
}
