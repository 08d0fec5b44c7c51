package v1

// Reasons of a VMI's status.reason and of its conditions, as Vireo's components give them
// (vireo-controller, the node agent and the launcher, whose domain's end becomes the VMI's
// reason). The values are KubeVirt's where KubeVirt has the same case.
const (
	// ReasonGuestNotRunning: Ready is False because the guest does not run (yet or any more).
	ReasonGuestNotRunning = "GuestNotRunning"
	// ReasonPodNotReady: Ready is False because the launcher Pod is not Ready.
	ReasonPodNotReady = "PodNotReady"
	// ReasonPodNotExists: the launcher Pod disappeared before the VMI ended.
	ReasonPodNotExists = "PodNotExists"
	// ReasonPodFailed: the launcher Pod ended before the guest was started.
	ReasonPodFailed = "PodFailed"
	// ReasonLauncherExited: the launcher ended without reporting how its guest ended (the node
	// agent's reason), or the launcher Pod of a running VMI ended and no node agent reported the
	// guest's end in time (the controller's).
	ReasonLauncherExited = "LauncherExited"
	// ReasonLauncherPodDeleted: the launcher Pod was deleted while the VMI was not, so the guest
	// was shut down under it.
	ReasonLauncherPodDeleted = "LauncherPodDeleted"
	// ReasonNodeUnresponsive: the launcher Pod's node did not stop the Pod it was asked to stop
	// (the taint manager evicts the Pods of a node that is unreachable or not ready past their
	// tolerations): the node is down or cut off. KubeVirt's reason for a VMI of a node gone.
	ReasonNodeUnresponsive = "NodeUnresponsive"
	// ReasonFailedCreate: the launcher Pod (or, on a VM, its VMI) could not be created.
	ReasonFailedCreate = "FailedCreate"
	// ReasonInvalidSpec: the VMI cannot be turned into a launcher Pod.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonFailedMount: the launcher Pod is on its node but cannot mount a volume, typically a
	// Secret the VMI refers to that does not exist; the message quotes the kubelet's event.
	ReasonFailedMount = "FailedMount"
	// ReasonSyncFailed: the node agent could not hand the VMI to its launcher, or the launcher
	// could not start the domain.
	ReasonSyncFailed = "SyncFailed"
	// ReasonSoftwareEmulation: the guest runs under QEMU TCG.
	ReasonSoftwareEmulation = "SoftwareEmulation"
	// ReasonEmulationNotAllowed ends a VMI whose node has no usable KVM while the cluster does
	// not allow software emulation (spec.configuration.developerConfiguration.useEmulation false).
	ReasonEmulationNotAllowed = "EmulationNotAllowed"
	// ReasonKernelBootImageInvalid: the kernelBoot image lacks the kernel or initrd the VMI
	// names, or they are not regular files the launcher can read.
	ReasonKernelBootImageInvalid = "KernelBootImageInvalid"
)

// Reasons a guest's domain ended (the launcher's; they become the VMI's status.reason).
const (
	ReasonGuestShutdown = "GuestShutdown"
	// ReasonLauncherTerminated: the kubelet stopped the launcher container (a failed liveness
	// probe, an eviction) while the VMI was not being deleted.
	ReasonLauncherTerminated = "LauncherTerminated"
	ReasonDestroyed          = "Destroyed"
	ReasonQEMUCrashed        = "QEMUCrashed"
	ReasonQEMUTerminated     = "QEMUTerminated"
	ReasonGuestPanicked      = "GuestPanicked"
	ReasonLibvirtExited      = "LibvirtExited"
	ReasonStoppedBeforeStart = "StoppedBeforeStart"
	// ReasonMigrated ends a launcher whose guest moved to a migration's target.
	ReasonMigrated = "Migrated"
)

// Reasons of a False LiveMigratable condition (KubeVirt's).
const (
	ReasonDisksNotLiveMigratable     = "DisksNotLiveMigratable"
	ReasonInterfaceNotLiveMigratable = "InterfaceNotLiveMigratable"
)

// Reasons of the DataVolumesReady condition of a VMI waiting for its DataVolumes (the VM's
// printableStatus says Provisioning, or DataVolumeError for ReasonDataVolumeFailed).
const (
	ReasonDataVolumeNotFound  = "DataVolumeNotFound"
	ReasonDataVolumeNotReady  = "DataVolumeNotReady"
	ReasonDataVolumeFailed    = "DataVolumeFailed"
	ReasonAllDataVolumesReady = "AllDataVolumesReady"
)

// Reasons of a VM's conditions.
const (
	ReasonVMINotExists    = "VMINotExists"
	ReasonTemplateChanged = "TemplateChanged"
)

// ReasonMigrationDeleted is the reason of the migrationAbortRequested condition of a deleted
// migration.
const ReasonMigrationDeleted = "MigrationDeleted"

// Reasons of the AccessCredentialsSynchronized condition (KubeVirt's).
const (
	ReasonAccessCredentialsSyncSuccess = "AccessCredentialsSyncSuccess"
	ReasonAccessCredentialsSyncFailed  = "AccessCredentialsSyncFailed"
)
