package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec describes the virtual hardware of the guest: resources, CPU,
// memory, machine type, firmware, features and devices.
type DomainSpec struct {
	// Resources are the compute resources requested for, and limiting, the launcher pod that runs the guest.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,1,opt,name=resources"`
	// CPU sets the guest's virtual CPU topology and model.
	// +optional
	CPU *CPU `json:"cpu,omitempty" protobuf:"bytes,2,opt,name=cpu"`
	// Memory sets how much memory the guest sees.
	// +optional
	Memory *Memory `json:"memory,omitempty" protobuf:"bytes,3,opt,name=memory"`
	// Machine selects the emulated machine type.
	// +optional
	Machine *Machine `json:"machine,omitempty" protobuf:"bytes,4,opt,name=machine"`
	// Firmware configures the guest's firmware: UUID, serial number, bootloader or direct kernel boot.
	// +optional
	Firmware *Firmware `json:"firmware,omitempty" protobuf:"bytes,5,opt,name=firmware"`
	// Clock sets the guest's clock offset (UTC or a time zone) and its timers.
	// +optional
	Clock *Clock `json:"clock,omitempty" protobuf:"bytes,6,opt,name=clock"`
	// Features turns optional platform features, such as ACPI, APIC, SMM and Hyper-V enlightenments, on or off.
	// +optional
	Features *Features `json:"features,omitempty" protobuf:"bytes,7,opt,name=features"`
	// Devices lists the guest's disks, network interfaces and other devices.
	Devices Devices `json:"devices" protobuf:"bytes,8,opt,name=devices"`
	// IOThreadsPolicy is how disks share I/O threads: shared, auto or supplementalPool.
	// +optional
	IOThreadsPolicy *IOThreadsPolicy `json:"ioThreadsPolicy,omitempty" protobuf:"bytes,9,opt,name=ioThreadsPolicy,casttype=IOThreadsPolicy"`
	// IOThreads configures the supplementalPool policy.
	// +optional
	IOThreads *DiskIOThreads `json:"ioThreads,omitempty" protobuf:"bytes,10,opt,name=ioThreads"`
	// Chassis is the SMBIOS chassis information the guest sees.
	// +optional
	Chassis *Chassis `json:"chassis,omitempty" protobuf:"bytes,11,opt,name=chassis"`
	// LaunchSecurity runs the guest with encrypted memory (SEV, SNP, TDX).
	// +optional
	LaunchSecurity *LaunchSecurity `json:"launchSecurity,omitempty" protobuf:"bytes,12,opt,name=launchSecurity"`
	// RebootPolicy is what a guest's reboot does: Reboot (the default) or Terminate.
	// +optional
	RebootPolicy *RebootPolicy `json:"rebootPolicy,omitempty" protobuf:"bytes,13,opt,name=rebootPolicy,casttype=RebootPolicy"`
}

// ResourceRequirements are the compute resources of the launcher pod that runs the guest.
type ResourceRequirements struct {
	// Requests are the minimum resources reserved for the VMI, such as cpu and memory.
	// The guest's memory defaults to the memory request.
	// +optional
	Requests ResourceList `json:"requests,omitempty" protobuf:"bytes,1,rep,name=requests,casttype=ResourceList,castkey=ResourceName"`
	// Limits are the maximum resources the VMI may use.
	// +optional
	Limits ResourceList `json:"limits,omitempty" protobuf:"bytes,2,rep,name=limits,casttype=ResourceList,castkey=ResourceName"`
	// OvercommitGuestOverhead leaves the launcher's memory overhead out of the memory request.
	// +optional
	OvercommitGuestOverhead bool `json:"overcommitGuestOverhead,omitempty" protobuf:"varint,3,opt,name=overcommitGuestOverhead"`
}

// Memory sets the memory visible to the guest.
type Memory struct {
	// Guest is the amount of memory the guest sees. Defaults to resources.requests.memory,
	// or else resources.limits.memory. May not exceed resources.limits.memory.
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty" protobuf:"bytes,1,opt,name=guest"`
	// Hugepages backs the guest's memory with huge pages.
	// +optional
	Hugepages *Hugepages `json:"hugepages,omitempty" protobuf:"bytes,2,opt,name=hugepages"`
	// MaxGuest is the most memory the guest may be hot-plugged up to.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty" protobuf:"bytes,3,opt,name=maxGuest"`
	// ReservedOverhead is memory the launcher Pod reserves above the guest's.
	// +optional
	ReservedOverhead *ReservedOverhead `json:"reservedOverhead,omitempty" protobuf:"bytes,4,opt,name=reservedOverhead"`
}

// CPU sets the guest's virtual CPU topology and model.
type CPU struct {
	// Cores is the number of cores in each socket. Defaults to 1.
	// +optional
	Cores uint32 `json:"cores,omitempty" protobuf:"varint,1,opt,name=cores"`
	// Sockets is the number of CPU sockets. Defaults from the CPU limit or request, else 1.
	// +optional
	Sockets uint32 `json:"sockets,omitempty" protobuf:"varint,2,opt,name=sockets"`
	// Threads is the number of threads in each core. Defaults to 1.
	// +optional
	Threads uint32 `json:"threads,omitempty" protobuf:"varint,3,opt,name=threads"`
	// Model is the CPU model exposed to the guest: "host-model" (the default), "host-passthrough",
	// or a named model known to QEMU, such as "Skylake-Server".
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,4,opt,name=model"`
	// DedicatedCPUPlacement pins each vCPU to a physical CPU reserved for the guest. It needs an
	// integer CPU request equal to the CPU limit (or a topology alone) and, when both are given, a
	// memory request equal to the memory limit. Stored and validated; Vireo does not run it yet and
	// fails such a VMI when it would start (reason Unsupported).
	// +optional
	DedicatedCPUPlacement bool `json:"dedicatedCpuPlacement,omitempty" protobuf:"varint,5,opt,name=dedicatedCpuPlacement"`
	// IsolateEmulatorThread reserves one more physical CPU for QEMU's emulator thread. Only allowed
	// with dedicatedCpuPlacement. Stored and validated; not run by Vireo's launcher yet.
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty" protobuf:"varint,6,opt,name=isolateEmulatorThread"`
	// MaxSockets is the most sockets vCPUs may be hot-plugged into.
	// +optional
	MaxSockets uint32 `json:"maxSockets,omitempty" protobuf:"varint,7,opt,name=maxSockets"`
	// Features turns CPU feature flags on or off.
	// +optional
	// +listType=atomic
	Features []CPUFeature `json:"features,omitempty" protobuf:"bytes,8,rep,name=features"`
	// NUMA sets the guest's NUMA topology.
	// +optional
	NUMA *NUMA `json:"numa,omitempty" protobuf:"bytes,9,opt,name=numa"`
	// Realtime tunes dedicated vCPUs for realtime workloads.
	// +optional
	Realtime *Realtime `json:"realtime,omitempty" protobuf:"bytes,10,opt,name=realtime"`
}

// Machine selects the emulated machine type.
type Machine struct {
	// Type is the QEMU machine type, such as "q35" (the default on amd64).
	// +optional
	Type string `json:"type" protobuf:"bytes,1,opt,name=type"`
}

// Firmware configures the guest's firmware.
type Firmware struct {
	// UUID is the SMBIOS system UUID the guest sees. A random UUID is filled in when empty.
	// +optional
	UUID types.UID `json:"uuid,omitempty" protobuf:"bytes,1,opt,name=uuid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// Bootloader selects BIOS or EFI firmware. BIOS is used when unset.
	// +optional
	Bootloader *Bootloader `json:"bootloader,omitempty" protobuf:"bytes,2,opt,name=bootloader"`
	// Serial is the SMBIOS system serial number the guest sees.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,3,opt,name=serial"`
	// KernelBoot boots the guest directly from a kernel (and optional initrd) taken from a container image,
	// instead of from a disk.
	// +optional
	KernelBoot *KernelBoot `json:"kernelBoot,omitempty" protobuf:"bytes,4,opt,name=kernelBoot"`
	// ACPI adds ACPI tables (SLIC, MSDM) from volumes.
	// +optional
	ACPI *ACPI `json:"acpi,omitempty" protobuf:"bytes,5,opt,name=acpi"`
}

// Bootloader selects the guest firmware. Exactly one of bios or efi may be set.
type Bootloader struct {
	// BIOS boots the guest with legacy BIOS firmware (SeaBIOS).
	// +optional
	BIOS *BIOS `json:"bios,omitempty" protobuf:"bytes,1,opt,name=bios"`
	// EFI boots the guest with UEFI firmware (OVMF).
	// +optional
	EFI *EFI `json:"efi,omitempty" protobuf:"bytes,2,opt,name=efi"`
}

// BIOS configures legacy BIOS firmware.
type BIOS struct {
	// UseSerial sends the BIOS's own output to the serial console as well as the display.
	// +optional
	UseSerial *bool `json:"useSerial,omitempty" protobuf:"varint,1,opt,name=useSerial"`
}

// EFI configures UEFI firmware.
type EFI struct {
	// SecureBoot makes the firmware verify the signatures of what it boots (Microsoft's keys
	// enrolled). On unless false; it needs features.smm.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty" protobuf:"varint,1,opt,name=secureBoot"`
	// Persistent keeps the firmware's variables (NVRAM: boot entries, enrolled keys) across
	// restarts of a VirtualMachine. Vireo does not keep them yet: true is refused; the variables
	// last as long as the VMI.
	// +optional
	Persistent *bool `json:"persistent,omitempty" protobuf:"varint,2,opt,name=persistent"`
}

// KernelBoot boots the guest directly from a kernel image, skipping firmware boot from a disk.
type KernelBoot struct {
	// KernelArgs is the kernel command line. Put console=ttyS0 last to see the boot log on the serial console.
	// +optional
	KernelArgs string `json:"kernelArgs,omitempty" protobuf:"bytes,1,opt,name=kernelArgs"`
	// Container is the image that holds the kernel and initrd.
	// +optional
	Container *KernelBootContainer `json:"container,omitempty" protobuf:"bytes,2,opt,name=container"`
}

// KernelBootContainer names the container image and the paths inside it of the kernel and initrd to boot.
type KernelBootContainer struct {
	// Image is the container image reference that holds the kernel and initrd.
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
	// KernelPath is the path of the kernel inside the image.
	// +optional
	KernelPath string `json:"kernelPath,omitempty" protobuf:"bytes,2,opt,name=kernelPath"`
	// InitrdPath is the path of the initrd inside the image.
	// +optional
	InitrdPath string `json:"initrdPath,omitempty" protobuf:"bytes,3,opt,name=initrdPath"`
	// ImagePullPolicy is Always, Never or IfNotPresent. Defaults to Always for the "latest" tag
	// or an untagged image, else IfNotPresent.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty" protobuf:"bytes,4,opt,name=imagePullPolicy,casttype=PullPolicy"`
	// ImagePullSecret names a Secret of type kubernetes.io/dockerconfigjson in the VMI's
	// namespace holding the registry credentials to pull Image with; it becomes one of the
	// launcher Pod's imagePullSecrets.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty" protobuf:"bytes,5,opt,name=imagePullSecret"`
}

// Devices lists the guest's devices.
type Devices struct {
	// Disks are the block devices the guest sees; each refers by name to an entry in spec.volumes.
	// Server-side apply merges them by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Disks []Disk `json:"disks,omitempty" protobuf:"bytes,1,rep,name=disks"`
	// Interfaces are the guest's network interfaces; each refers by name to an entry in spec.networks.
	// Server-side apply merges them by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Interfaces []Interface `json:"interfaces,omitempty" protobuf:"bytes,2,rep,name=interfaces"`
	// AutoattachPodInterface adds a pod network and a default interface when neither networks nor
	// interfaces are given. Defaults to true.
	// +optional
	AutoattachPodInterface *bool `json:"autoattachPodInterface,omitempty" protobuf:"varint,3,opt,name=autoattachPodInterface"`
	// AutoattachGraphicsDevice adds a VGA display, reachable over VNC. Defaults to true.
	// +optional
	AutoattachGraphicsDevice *bool `json:"autoattachGraphicsDevice,omitempty" protobuf:"varint,4,opt,name=autoattachGraphicsDevice"`
	// AutoattachSerialConsole adds a serial console on the guest's first serial port (ttyS0). Defaults to true.
	// +optional
	AutoattachSerialConsole *bool `json:"autoattachSerialConsole,omitempty" protobuf:"varint,5,opt,name=autoattachSerialConsole"`
	// Rng, when set, gives the guest a virtio random number generator fed from the host.
	// +optional
	Rng *Rng `json:"rng,omitempty" protobuf:"bytes,6,opt,name=rng"`
	// TPM, when set, gives the guest an emulated TPM 2.0 device. Stored; not run by Vireo's
	// launcher yet.
	// +optional
	TPM *TPMDevice `json:"tpm,omitempty" protobuf:"bytes,7,opt,name=tpm"`
	// UseVirtioTransitional uses virtio devices that older guests' drivers know (virtio 0.9).
	// +optional
	UseVirtioTransitional *bool `json:"useVirtioTransitional,omitempty" protobuf:"varint,8,opt,name=useVirtioTransitional"`
	// DisableHotplug leaves no room for hot-plugged devices.
	// +optional
	DisableHotplug bool `json:"disableHotplug,omitempty" protobuf:"varint,9,opt,name=disableHotplug"`
	// Watchdog is a hardware watchdog the guest must keep feeding.
	// +optional
	Watchdog *Watchdog `json:"watchdog,omitempty" protobuf:"bytes,10,opt,name=watchdog"`
	// Inputs are pointing devices, such as a USB tablet.
	// +optional
	// +listType=atomic
	Inputs []Input `json:"inputs,omitempty" protobuf:"bytes,11,rep,name=inputs"`
	// LogSerialConsole keeps the serial console's output in the launcher's log. Defaults to the
	// cluster's setting.
	// +optional
	LogSerialConsole *bool `json:"logSerialConsole,omitempty" protobuf:"varint,12,opt,name=logSerialConsole"`
	// AutoattachMemBalloon adds a virtio memory balloon. Defaults to true.
	// +optional
	AutoattachMemBalloon *bool `json:"autoattachMemBalloon,omitempty" protobuf:"varint,13,opt,name=autoattachMemBalloon"`
	// AutoattachInputDevice adds a tablet input device. Defaults to false.
	// +optional
	AutoattachInputDevice *bool `json:"autoattachInputDevice,omitempty" protobuf:"varint,14,opt,name=autoattachInputDevice"`
	// AutoattachVSOCK adds a virtio vsock device. Defaults to false.
	// +optional
	AutoattachVSOCK *bool `json:"autoattachVSOCK,omitempty" protobuf:"varint,15,opt,name=autoattachVSOCK"`
	// BlockMultiQueue gives each virtio disk one queue per vCPU.
	// +optional
	BlockMultiQueue *bool `json:"blockMultiQueue,omitempty" protobuf:"varint,16,opt,name=blockMultiQueue"`
	// NetworkInterfaceMultiQueue gives each virtio interface one queue per vCPU.
	// +optional
	NetworkInterfaceMultiQueue *bool `json:"networkInterfaceMultiqueue,omitempty" protobuf:"varint,17,opt,name=networkInterfaceMultiqueue"`
	// GPUs are GPUs passed through to the guest.
	// +optional
	// +listType=atomic
	GPUs []GPU `json:"gpus,omitempty" protobuf:"bytes,18,rep,name=gpus"`
	// DownwardMetrics gives the guest a port with the host's metrics about it.
	// +optional
	DownwardMetrics *DownwardMetrics `json:"downwardMetrics,omitempty" protobuf:"bytes,19,opt,name=downwardMetrics"`
	// PanicDevices let the guest report a crash.
	// +optional
	// +listType=atomic
	PanicDevices []PanicDevice `json:"panicDevices,omitempty" protobuf:"bytes,20,rep,name=panicDevices"`
	// Filesystems share volumes as filesystems (virtiofs).
	// +optional
	// +listType=atomic
	Filesystems []Filesystem `json:"filesystems,omitempty" protobuf:"bytes,21,rep,name=filesystems"`
	// HostDevices are host devices passed through to the guest.
	// +optional
	// +listType=atomic
	HostDevices []HostDevice `json:"hostDevices,omitempty" protobuf:"bytes,22,rep,name=hostDevices"`
	// ClientPassthrough lets a client pass its USB devices through.
	// +optional
	ClientPassthrough *ClientPassthroughDevices `json:"clientPassthrough,omitempty" protobuf:"bytes,23,opt,name=clientPassthrough"`
	// Sound is an emulated sound card.
	// +optional
	Sound *SoundDevice `json:"sound,omitempty" protobuf:"bytes,24,opt,name=sound"`
	// Video picks the guest's display adapter.
	// +optional
	Video *VideoDevice `json:"video,omitempty" protobuf:"bytes,25,opt,name=video"`
}

// Rng is a virtio random number generator device; it has no settings.
type Rng struct{}

// TPMDevice is an emulated TPM 2.0 device (swtpm), as KubeVirt offers for guests that need one,
// such as Windows 11.
type TPMDevice struct {
	// Enabled set to false removes the TPM even where a preference would add one. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// Persistent keeps the TPM's state across restarts of the VM. Defaults to false.
	// +optional
	Persistent *bool `json:"persistent,omitempty" protobuf:"varint,2,opt,name=persistent"`
}

// Disk attaches a volume to the guest as a disk or CD-ROM.
type Disk struct {
	// Name of the disk; must match the name of a volume in spec.volumes.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DiskDevice chooses how the volume is attached: as a disk or as a CD-ROM.
	// A disk with neither set is attached as a disk.
	DiskDevice `json:",inline" protobuf:"bytes,2,opt,name=diskDevice"`
	// BootOrder is this device's place in the boot order; lower values boot first. Values must be
	// at least 1 and unique across disks and interfaces. Devices without a boot order are not
	// booted from when any device has one.
	// +optional
	BootOrder *uint32 `json:"bootOrder,omitempty" protobuf:"varint,3,opt,name=bootOrder"`
	// Serial is the serial number the guest sees for the disk: at most 256 characters from
	// [A-Za-z0-9_.+-].
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,4,opt,name=serial"`
	// Cache is the host page cache mode for the disk: none, writethrough or writeback.
	// +optional
	Cache DriverCache `json:"cache,omitempty" protobuf:"bytes,5,opt,name=cache,casttype=DriverCache"`
	// DedicatedIOThread gives the disk an I/O thread of its own.
	// +optional
	DedicatedIOThread *bool `json:"dedicatedIOThread,omitempty" protobuf:"varint,6,opt,name=dedicatedIOThread"`
	// IO is the disk's I/O mode: native, threads or default.
	// +optional
	IO DriverIO `json:"io,omitempty" protobuf:"bytes,7,opt,name=io,casttype=DriverIO"`
	// Tag is a label for the disk in the guest's device role metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,8,opt,name=tag"`
	// BlockSize sets the block sizes the disk reports.
	// +optional
	BlockSize *BlockSize `json:"blockSize,omitempty" protobuf:"bytes,9,opt,name=blockSize"`
	// Shareable lets several VMIs attach the volume at once.
	// +optional
	Shareable *bool `json:"shareable,omitempty" protobuf:"varint,10,opt,name=shareable"`
	// ErrorPolicy is what the guest sees on a disk error: stop, ignore, report or enospace.
	// +optional
	ErrorPolicy *DiskErrorPolicy `json:"errorPolicy,omitempty" protobuf:"bytes,11,opt,name=errorPolicy,casttype=DiskErrorPolicy"`
	// ChangedBlockTracking tracks changed blocks for incremental backups.
	// +optional
	ChangedBlockTracking *bool `json:"changedBlockTracking,omitempty" protobuf:"varint,12,opt,name=changedBlockTracking"`
}

// DiskDevice is how a volume is attached to the guest. At most one of its fields may be set.
type DiskDevice struct {
	// Disk attaches the volume as a hard disk.
	// +optional
	Disk *DiskTarget `json:"disk,omitempty" protobuf:"bytes,1,opt,name=disk"`
	// LUN passes the volume through as a SCSI LUN, so that the guest can send it SCSI commands.
	// Only persistentVolumeClaim and dataVolume volumes can be attached this way. Stored and
	// validated; not run by Vireo's launcher yet.
	// +optional
	LUN *LunTarget `json:"lun,omitempty" protobuf:"bytes,2,opt,name=lun"`
	// CDRom attaches the volume as a CD-ROM drive.
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty" protobuf:"bytes,3,opt,name=cdrom"`
}

// DiskBus is the bus a disk or CD-ROM is attached to.
type DiskBus string

const (
	// DiskBusVirtio is the paravirtualized virtio bus; fastest, but needs guest drivers.
	DiskBusVirtio DiskBus = "virtio"
	// DiskBusSATA is an emulated SATA controller; works without guest drivers.
	DiskBusSATA DiskBus = "sata"
	// DiskBusSCSI is a virtio SCSI controller.
	DiskBusSCSI DiskBus = "scsi"
	// DiskBusUSB is an emulated USB controller.
	DiskBusUSB DiskBus = "usb"
)

// DiskTarget attaches a volume as a hard disk.
type DiskTarget struct {
	// Bus is virtio, sata, scsi or usb. Defaults to sata on amd64 and virtio on arm64.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the disk read-only. SATA hard disks cannot be read-only (QEMU's emulated
	// controller does not support it); use virtio or scsi, or attach the volume as a cdrom.
	// Defaults to false.
	// +optional
	ReadOnly bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// PciAddress places the disk at a PCI address in the guest.
	// +optional
	PciAddress string `json:"pciAddress,omitempty" protobuf:"bytes,3,opt,name=pciAddress"`
}

// LunTarget passes a volume through to the guest as a SCSI LUN.
type LunTarget struct {
	// Bus is virtio, sata, scsi or usb; a LUN is normally attached on scsi.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the LUN read-only. Defaults to false.
	// +optional
	ReadOnly bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// Reservation lets the guest use SCSI persistent reservations on the LUN; it needs the scsi
	// bus. Not run by Vireo's launcher yet.
	// +optional
	Reservation bool `json:"reservation,omitempty" protobuf:"varint,3,opt,name=reservation"`
}

// CDRomTarget attaches a volume as a CD-ROM drive.
type CDRomTarget struct {
	// Bus is sata, scsi or usb. Defaults to sata on amd64.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the medium read-only. Defaults to true.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// Tray is whether the drive's tray is open (no medium) or closed. Defaults to closed.
	// +optional
	Tray TrayState `json:"tray,omitempty" protobuf:"bytes,3,opt,name=tray,casttype=TrayState"`
}

// TrayState is the state of a CD-ROM drive's tray.
type TrayState string

const (
	// TrayStateOpen means the drive has no medium inserted.
	TrayStateOpen TrayState = "open"
	// TrayStateClosed means the volume is inserted as the drive's medium.
	TrayStateClosed TrayState = "closed"
)

// DriverCache is the host page cache mode used for a disk.
type DriverCache string

const (
	// CacheNone bypasses the host page cache (O_DIRECT).
	CacheNone DriverCache = "none"
	// CacheWriteThrough caches reads in the host and writes through to storage.
	CacheWriteThrough DriverCache = "writethrough"
	// CacheWriteBack caches reads and writes in the host; a host crash can lose data the guest believes written.
	CacheWriteBack DriverCache = "writeback"
)
