package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// VirtualMachineInstancetype is the size of a VM, in one namespace: its CPUs, memory and the
// devices it must have. A VM that names it (spec.instancetype) runs with these values and may
// not set them itself.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is what the instancetype gives a VM.
	Spec VirtualMachineInstancetypeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachineInstancetypeList is a list of VirtualMachineInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the instancetypes in the list.
	Items []VirtualMachineInstancetype `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineClusterInstancetype is an instancetype for every namespace.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is what the instancetype gives a VM.
	Spec VirtualMachineInstancetypeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachineClusterInstancetypeList is a list of VirtualMachineClusterInstancetypes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the instancetypes in the list.
	Items []VirtualMachineClusterInstancetype `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstancetypeSpec is the size an instancetype gives a VM.
type VirtualMachineInstancetypeSpec struct {
	// NodeSelector is added to the VMI's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,1,rep,name=nodeSelector"`
	// SchedulerName is the scheduler of the VMI's launcher Pod.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,2,opt,name=schedulerName"`
	// CPU is the number of vCPUs and how they are placed.
	CPU CPUInstancetype `json:"cpu" protobuf:"bytes,3,opt,name=cpu"`
	// Memory is the guest's memory.
	Memory MemoryInstancetype `json:"memory" protobuf:"bytes,4,opt,name=memory"`
	// GPUs are the GPUs the VM gets.
	// +optional
	// +listType=atomic
	GPUs []v1.GPU `json:"gpus,omitempty" protobuf:"bytes,5,rep,name=gpus"`
	// HostDevices are the host devices the VM gets.
	// +optional
	// +listType=atomic
	HostDevices []v1.HostDevice `json:"hostDevices,omitempty" protobuf:"bytes,6,rep,name=hostDevices"`
	// IOThreadsPolicy is how disks get I/O threads: shared, auto or supplementalPool.
	// +optional
	IOThreadsPolicy *v1.IOThreadsPolicy `json:"ioThreadsPolicy,omitempty" protobuf:"bytes,7,opt,name=ioThreadsPolicy,casttype=github.com/vireo-dev/vireo/apis/core/v1.IOThreadsPolicy"`
	// IOThreads is the size of the supplemental pool of I/O threads.
	// +optional
	IOThreads *v1.DiskIOThreads `json:"ioThreads,omitempty" protobuf:"bytes,8,opt,name=ioThreads"`
	// LaunchSecurity is the VM's memory encryption (SEV and the like).
	// +optional
	LaunchSecurity *v1.LaunchSecurity `json:"launchSecurity,omitempty" protobuf:"bytes,9,opt,name=launchSecurity"`
	// Annotations are added to the VMI.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,10,rep,name=annotations"`
}

// CPUInstancetype is an instancetype's vCPUs.
type CPUInstancetype struct {
	// Guest is the number of vCPUs; the preference's topology lays them out (sockets by default).
	Guest uint32 `json:"guest" protobuf:"varint,1,opt,name=guest"`
	// Model is the CPU model.
	// +optional
	Model *string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
	// DedicatedCPUPlacement pins each vCPU to a host CPU of its own.
	// +optional
	DedicatedCPUPlacement *bool `json:"dedicatedCPUPlacement,omitempty" protobuf:"varint,3,opt,name=dedicatedCPUPlacement"`
	// NUMA is how the guest's NUMA topology follows the host's.
	// +optional
	NUMA *v1.NUMA `json:"numa,omitempty" protobuf:"bytes,4,opt,name=numa"`
	// IsolateEmulatorThread gives QEMU's emulator thread a host CPU of its own.
	// +optional
	IsolateEmulatorThread *bool `json:"isolateEmulatorThread,omitempty" protobuf:"varint,5,opt,name=isolateEmulatorThread"`
	// Realtime tunes the vCPUs for realtime work.
	// +optional
	Realtime *v1.Realtime `json:"realtime,omitempty" protobuf:"bytes,6,opt,name=realtime"`
	// MaxSockets is the most sockets CPU hotplug may grow to.
	// +optional
	MaxSockets *uint32 `json:"maxSockets,omitempty" protobuf:"varint,7,opt,name=maxSockets"`
}

// MemoryInstancetype is an instancetype's memory.
type MemoryInstancetype struct {
	// Guest is the memory the guest sees.
	Guest resource.Quantity `json:"guest" protobuf:"bytes,1,opt,name=guest"`
	// Hugepages backs the guest's memory with huge pages of this size.
	// +optional
	Hugepages *v1.Hugepages `json:"hugepages,omitempty" protobuf:"bytes,2,opt,name=hugepages"`
	// OvercommitPercent requests this much less memory for the launcher Pod than the guest
	// has (0 to 100).
	// +optional
	OvercommitPercent int32 `json:"overcommitPercent,omitempty" protobuf:"varint,3,opt,name=overcommitPercent"`
	// MaxGuest is the most memory hotplug may grow the guest to.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty" protobuf:"bytes,4,opt,name=maxGuest"`
}

// VirtualMachinePreference holds defaults for VMs in one namespace: a VM that names it
// (spec.preference) takes them where it sets nothing itself.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePreference struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the preferred values.
	Spec VirtualMachinePreferenceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachinePreferenceList is a list of VirtualMachinePreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the preferences in the list.
	Items []VirtualMachinePreference `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineClusterPreference is a preference for every namespace.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterPreference struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the preferred values.
	Spec VirtualMachinePreferenceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachineClusterPreferenceList is a list of VirtualMachineClusterPreferences.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineClusterPreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the preferences in the list.
	Items []VirtualMachineClusterPreference `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachinePreferenceSpec is the values a preference gives VMs that leave them unset.
type VirtualMachinePreferenceSpec struct {
	// Clock is the preferred clock.
	// +optional
	Clock *ClockPreferences `json:"clock,omitempty" protobuf:"bytes,1,opt,name=clock"`
	// CPU is the preferred CPU topology and features.
	// +optional
	CPU *CPUPreferences `json:"cpu,omitempty" protobuf:"bytes,2,opt,name=cpu"`
	// Devices are the preferred device settings (buses, models, what is attached).
	// +optional
	Devices *DevicePreferences `json:"devices,omitempty" protobuf:"bytes,3,opt,name=devices"`
	// Features are the preferred hypervisor features.
	// +optional
	Features *FeaturePreferences `json:"features,omitempty" protobuf:"bytes,4,opt,name=features"`
	// Firmware is the preferred firmware.
	// +optional
	Firmware *FirmwarePreferences `json:"firmware,omitempty" protobuf:"bytes,5,opt,name=firmware"`
	// Machine is the preferred machine type.
	// +optional
	Machine *MachinePreferences `json:"machine,omitempty" protobuf:"bytes,6,opt,name=machine"`
	// Volumes are the preferred volume settings.
	// +optional
	Volumes *VolumePreferences `json:"volumes,omitempty" protobuf:"bytes,7,opt,name=volumes"`
	// PreferredSubdomain is the preferred spec.subdomain.
	// +optional
	PreferredSubdomain *string `json:"preferredSubdomain,omitempty" protobuf:"bytes,8,opt,name=preferredSubdomain"`
	// PreferredTerminationGracePeriodSeconds is the preferred grace period.
	// +optional
	PreferredTerminationGracePeriodSeconds *int64 `json:"preferredTerminationGracePeriodSeconds,omitempty" protobuf:"varint,9,opt,name=preferredTerminationGracePeriodSeconds"`
	// Requirements are the least CPUs and memory (and the architecture) a VM using the
	// preference must have.
	// +optional
	Requirements *PreferenceRequirements `json:"requirements,omitempty" protobuf:"bytes,10,opt,name=requirements"`
	// Annotations are added to the VMI where it does not set them.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,11,rep,name=annotations"`
	// PreferSpreadSocketToCoreRatio is the ratio of the deprecated preferSpread topology.
	// +optional
	PreferSpreadSocketToCoreRatio uint32 `json:"preferSpreadSocketToCoreRatio,omitempty" protobuf:"varint,12,opt,name=preferSpreadSocketToCoreRatio"`
	// PreferredArchitecture is the preferred spec.architecture.
	// +optional
	PreferredArchitecture *string `json:"preferredArchitecture,omitempty" protobuf:"bytes,13,opt,name=preferredArchitecture"`
	// PreferredLaunchSecurity is the preferred memory encryption.
	// +optional
	PreferredLaunchSecurity *v1.LaunchSecurity `json:"preferredLaunchSecurity,omitempty" protobuf:"bytes,14,opt,name=preferredLaunchSecurity"`
}

// VolumePreferences are the preferred volume settings.
type VolumePreferences struct {
	// PreferredStorageClassName is the storage class of DataVolume templates that name none.
	// +optional
	PreferredStorageClassName string `json:"preferredStorageClassName,omitempty" protobuf:"bytes,1,opt,name=preferredStorageClassName"`
}

// PreferredCPUTopology is how an instancetype's vCPUs are laid out.
type PreferredCPUTopology string

// The topologies: all vCPUs as sockets (the default), cores or threads, spread over sockets and
// cores (see spreadOptions), or any layout; the prefer* names are deprecated spellings.
const (
	PreferSockets           PreferredCPUTopology = "sockets"
	PreferCores             PreferredCPUTopology = "cores"
	PreferThreads           PreferredCPUTopology = "threads"
	PreferSpread            PreferredCPUTopology = "spread"
	PreferAny               PreferredCPUTopology = "any"
	DeprecatedPreferSockets PreferredCPUTopology = "preferSockets"
	DeprecatedPreferCores   PreferredCPUTopology = "preferCores"
	DeprecatedPreferThreads PreferredCPUTopology = "preferThreads"
	DeprecatedPreferSpread  PreferredCPUTopology = "preferSpread"
	DeprecatedPreferAny     PreferredCPUTopology = "preferAny"
)

// CPUPreferences are the preferred CPU topology and features.
type CPUPreferences struct {
	// PreferredCPUTopology lays the instancetype's vCPUs out.
	// +optional
	PreferredCPUTopology *PreferredCPUTopology `json:"preferredCPUTopology,omitempty" protobuf:"bytes,1,opt,name=preferredCPUTopology,casttype=PreferredCPUTopology"`
	// SpreadOptions tune the spread topology.
	// +optional
	SpreadOptions *SpreadOptions `json:"spreadOptions,omitempty" protobuf:"bytes,2,opt,name=spreadOptions"`
	// PreferredCPUFeatures are CPU features the VM gets where it names none.
	// +optional
	// +listType=atomic
	PreferredCPUFeatures []v1.CPUFeature `json:"preferredCPUFeatures,omitempty" protobuf:"bytes,3,rep,name=preferredCPUFeatures"`
}

// SpreadAcross is what the spread topology spreads vCPUs over.
type SpreadAcross string

// The spreads.
const (
	SpreadAcrossSocketsCoresThreads SpreadAcross = "SocketsCoresThreads"
	SpreadAcrossSocketsCores        SpreadAcross = "SocketsCores"
	SpreadAcrossCoresThreads        SpreadAcross = "CoresThreads"
)

// SpreadOptions tune the spread topology.
type SpreadOptions struct {
	// Across is SocketsCores (the default), SocketsCoresThreads or CoresThreads.
	// +optional
	Across *SpreadAcross `json:"across,omitempty" protobuf:"bytes,1,opt,name=across,casttype=SpreadAcross"`
	// Ratio is the vCPUs of the inner level per unit of the outer one (2 by default).
	// +optional
	Ratio *uint32 `json:"ratio,omitempty" protobuf:"varint,2,opt,name=ratio"`
}

// DevicePreferences are the preferred device settings.
type DevicePreferences struct {
	// PreferredAutoattachGraphicsDevice is the preferred devices.autoattachGraphicsDevice.
	// +optional
	PreferredAutoattachGraphicsDevice *bool `json:"preferredAutoattachGraphicsDevice,omitempty" protobuf:"varint,1,opt,name=preferredAutoattachGraphicsDevice"`
	// PreferredAutoattachMemBalloon is the preferred devices.autoattachMemBalloon.
	// +optional
	PreferredAutoattachMemBalloon *bool `json:"preferredAutoattachMemBalloon,omitempty" protobuf:"varint,2,opt,name=preferredAutoattachMemBalloon"`
	// PreferredAutoattachPodInterface is the preferred devices.autoattachPodInterface.
	// +optional
	PreferredAutoattachPodInterface *bool `json:"preferredAutoattachPodInterface,omitempty" protobuf:"varint,3,opt,name=preferredAutoattachPodInterface"`
	// PreferredAutoattachSerialConsole is the preferred devices.autoattachSerialConsole.
	// +optional
	PreferredAutoattachSerialConsole *bool `json:"preferredAutoattachSerialConsole,omitempty" protobuf:"varint,4,opt,name=preferredAutoattachSerialConsole"`
	// PreferredAutoattachInputDevice is the preferred devices.autoattachInputDevice.
	// +optional
	PreferredAutoattachInputDevice *bool `json:"preferredAutoattachInputDevice,omitempty" protobuf:"varint,5,opt,name=preferredAutoattachInputDevice"`
	// PreferredDisableHotplug is the preferred devices.disableHotplug.
	// +optional
	PreferredDisableHotplug *bool `json:"preferredDisableHotplug,omitempty" protobuf:"varint,6,opt,name=preferredDisableHotplug"`
	// PreferredVirtualGPUOptions are the preferred vGPU options.
	// +optional
	PreferredVirtualGPUOptions *v1.VGPUOptions `json:"preferredVirtualGPUOptions,omitempty" protobuf:"bytes,7,opt,name=preferredVirtualGPUOptions"`
	// PreferredSoundModel is the preferred sound device model.
	// +optional
	PreferredSoundModel string `json:"preferredSoundModel,omitempty" protobuf:"bytes,8,opt,name=preferredSoundModel"`
	// PreferredUseVirtioTransitional is the preferred devices.useVirtioTransitional.
	// +optional
	PreferredUseVirtioTransitional *bool `json:"preferredUseVirtioTransitional,omitempty" protobuf:"varint,9,opt,name=preferredUseVirtioTransitional"`
	// PreferredInputBus is the bus of input devices that name none.
	// +optional
	PreferredInputBus v1.InputBus `json:"preferredInputBus,omitempty" protobuf:"bytes,10,opt,name=preferredInputBus,casttype=github.com/vireo-dev/vireo/apis/core/v1.InputBus"`
	// PreferredInputType is the type of input devices that name none.
	// +optional
	PreferredInputType v1.InputType `json:"preferredInputType,omitempty" protobuf:"bytes,11,opt,name=preferredInputType,casttype=github.com/vireo-dev/vireo/apis/core/v1.InputType"`
	// PreferredDiskBus is the bus of disks that name none.
	// +optional
	PreferredDiskBus v1.DiskBus `json:"preferredDiskBus,omitempty" protobuf:"bytes,12,opt,name=preferredDiskBus,casttype=github.com/vireo-dev/vireo/apis/core/v1.DiskBus"`
	// PreferredLunBus is the bus of LUNs that name none.
	// +optional
	PreferredLunBus v1.DiskBus `json:"preferredLunBus,omitempty" protobuf:"bytes,13,opt,name=preferredLunBus,casttype=github.com/vireo-dev/vireo/apis/core/v1.DiskBus"`
	// PreferredCdromBus is the bus of CD-ROMs that name none.
	// +optional
	PreferredCdromBus v1.DiskBus `json:"preferredCdromBus,omitempty" protobuf:"bytes,14,opt,name=preferredCdromBus,casttype=github.com/vireo-dev/vireo/apis/core/v1.DiskBus"`
	// PreferredDiskDedicatedIoThread is the preferred dedicatedIOThread of disks.
	// +optional
	PreferredDiskDedicatedIoThread *bool `json:"preferredDiskDedicatedIoThread,omitempty" protobuf:"varint,15,opt,name=preferredDiskDedicatedIoThread"`
	// PreferredDiskCache is the preferred cache mode of disks.
	// +optional
	PreferredDiskCache v1.DriverCache `json:"preferredDiskCache,omitempty" protobuf:"bytes,16,opt,name=preferredDiskCache,casttype=github.com/vireo-dev/vireo/apis/core/v1.DriverCache"`
	// PreferredDiskIO is the preferred I/O mode of disks.
	// +optional
	PreferredDiskIO v1.DriverIO `json:"preferredDiskIO,omitempty" protobuf:"bytes,17,opt,name=preferredDiskIO,casttype=github.com/vireo-dev/vireo/apis/core/v1.DriverIO"`
	// PreferredDiskBlockSize is the preferred block size of disks.
	// +optional
	PreferredDiskBlockSize *v1.BlockSize `json:"preferredDiskBlockSize,omitempty" protobuf:"bytes,18,opt,name=preferredDiskBlockSize"`
	// PreferredInterfaceModel is the model of interfaces that name none.
	// +optional
	PreferredInterfaceModel string `json:"preferredInterfaceModel,omitempty" protobuf:"bytes,19,opt,name=preferredInterfaceModel"`
	// PreferredRng attaches a random number generator.
	// +optional
	PreferredRng *v1.Rng `json:"preferredRng,omitempty" protobuf:"bytes,20,opt,name=preferredRng"`
	// PreferredBlockMultiQueue is the preferred devices.blockMultiQueue.
	// +optional
	PreferredBlockMultiQueue *bool `json:"preferredBlockMultiQueue,omitempty" protobuf:"varint,21,opt,name=preferredBlockMultiQueue"`
	// PreferredNetworkInterfaceMultiQueue is the preferred devices.networkInterfaceMultiqueue.
	// +optional
	PreferredNetworkInterfaceMultiQueue *bool `json:"preferredNetworkInterfaceMultiQueue,omitempty" protobuf:"varint,22,opt,name=preferredNetworkInterfaceMultiQueue"`
	// PreferredTPM attaches a TPM.
	// +optional
	PreferredTPM *v1.TPMDevice `json:"preferredTPM,omitempty" protobuf:"bytes,23,opt,name=preferredTPM"`
	// PreferredInterfaceMasquerade is the binding of interfaces that name none.
	// +optional
	PreferredInterfaceMasquerade *v1.InterfaceMasquerade `json:"preferredInterfaceMasquerade,omitempty" protobuf:"bytes,24,opt,name=preferredInterfaceMasquerade"`
	// PreferredPanicDeviceModel is the model of panic devices that name none.
	// +optional
	PreferredPanicDeviceModel *v1.PanicDeviceModel `json:"preferredPanicDeviceModel,omitempty" protobuf:"bytes,25,opt,name=preferredPanicDeviceModel,casttype=github.com/vireo-dev/vireo/apis/core/v1.PanicDeviceModel"`
	// PreferredVideoType is the preferred video device type.
	// +optional
	PreferredVideoType *string `json:"preferredVideoType,omitempty" protobuf:"bytes,26,opt,name=preferredVideoType"`
}

// FeaturePreferences are the preferred hypervisor features.
type FeaturePreferences struct {
	// PreferredAcpi is the preferred features.acpi.
	// +optional
	PreferredAcpi *v1.FeatureState `json:"preferredAcpi,omitempty" protobuf:"bytes,1,opt,name=preferredAcpi"`
	// PreferredApic is the preferred features.apic.
	// +optional
	PreferredApic *v1.FeatureAPIC `json:"preferredApic,omitempty" protobuf:"bytes,2,opt,name=preferredApic"`
	// PreferredHyperv is the preferred features.hyperv.
	// +optional
	PreferredHyperv *v1.FeatureHyperv `json:"preferredHyperv,omitempty" protobuf:"bytes,3,opt,name=preferredHyperv"`
	// PreferredKvm is the preferred features.kvm.
	// +optional
	PreferredKvm *v1.FeatureKVM `json:"preferredKvm,omitempty" protobuf:"bytes,4,opt,name=preferredKvm"`
	// PreferredPvspinlock is the preferred features.pvspinlock.
	// +optional
	PreferredPvspinlock *v1.FeatureState `json:"preferredPvspinlock,omitempty" protobuf:"bytes,5,opt,name=preferredPvspinlock"`
	// PreferredSmm is the preferred features.smm.
	// +optional
	PreferredSmm *v1.FeatureState `json:"preferredSmm,omitempty" protobuf:"bytes,6,opt,name=preferredSmm"`
}

// FirmwarePreferences are the preferred firmware.
type FirmwarePreferences struct {
	// PreferredUseBios boots with BIOS.
	// +optional
	PreferredUseBios *bool `json:"preferredUseBios,omitempty" protobuf:"varint,1,opt,name=preferredUseBios"`
	// PreferredUseBiosSerial sends BIOS output to the serial console.
	// +optional
	PreferredUseBiosSerial *bool `json:"preferredUseBiosSerial,omitempty" protobuf:"varint,2,opt,name=preferredUseBiosSerial"`
	// DeprecatedPreferredUseEfi boots with EFI (use preferredEfi).
	// +optional
	DeprecatedPreferredUseEfi *bool `json:"preferredUseEfi,omitempty" protobuf:"varint,3,opt,name=preferredUseEfi"`
	// DeprecatedPreferredUseSecureBoot boots with EFI secure boot (use preferredEfi).
	// +optional
	DeprecatedPreferredUseSecureBoot *bool `json:"preferredUseSecureBoot,omitempty" protobuf:"varint,4,opt,name=preferredUseSecureBoot"`
	// PreferredEfi is the preferred EFI firmware.
	// +optional
	PreferredEfi *v1.EFI `json:"preferredEfi,omitempty" protobuf:"bytes,5,opt,name=preferredEfi"`
}

// MachinePreferences are the preferred machine settings.
type MachinePreferences struct {
	// PreferredMachineType is the machine type of VMs that name none.
	// +optional
	PreferredMachineType string `json:"preferredMachineType,omitempty" protobuf:"bytes,1,opt,name=preferredMachineType"`
}

// ClockPreferences are the preferred clock settings.
type ClockPreferences struct {
	// PreferredClockOffset is the preferred clock offset (utc or timezone).
	// +optional
	PreferredClockOffset *v1.ClockOffset `json:"preferredClockOffset,omitempty" protobuf:"bytes,1,opt,name=preferredClockOffset"`
	// PreferredTimer are the preferred timers.
	// +optional
	PreferredTimer *v1.Timer `json:"preferredTimer,omitempty" protobuf:"bytes,2,opt,name=preferredTimer"`
}

// PreferenceRequirements are the least resources a VM using a preference must have.
type PreferenceRequirements struct {
	// CPU is the least number of vCPUs.
	// +optional
	CPU *CPUPreferenceRequirement `json:"cpu,omitempty" protobuf:"bytes,1,opt,name=cpu"`
	// Memory is the least guest memory.
	// +optional
	Memory *MemoryPreferenceRequirement `json:"memory,omitempty" protobuf:"bytes,2,opt,name=memory"`
	// Architecture is the architecture the VM must have.
	// +optional
	Architecture *string `json:"architecture,omitempty" protobuf:"bytes,3,opt,name=architecture"`
}

// CPUPreferenceRequirement is the least number of vCPUs.
type CPUPreferenceRequirement struct {
	// Guest is the least number of vCPUs.
	Guest uint32 `json:"guest" protobuf:"varint,1,opt,name=guest"`
}

// MemoryPreferenceRequirement is the least guest memory.
type MemoryPreferenceRequirement struct {
	// Guest is the least guest memory.
	Guest resource.Quantity `json:"guest" protobuf:"bytes,1,opt,name=guest"`
}
