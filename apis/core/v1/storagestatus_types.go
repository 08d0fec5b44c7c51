package v1

import (
	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The status KubeVirt's storage controllers (hotplug, snapshots, memory dumps, volume migration,
// backups) write on VMs and VMIs. Vireo does not run these controllers yet and writes none of
// it; the fields are in the schema so that KubeVirt's clients read and write the same objects.

// VirtualMachineVolumeRequest is a pending hotplug or unplug of a VM's volume.
type VirtualMachineVolumeRequest struct {
	// AddVolumeOptions adds a volume.
	// +optional
	AddVolumeOptions *AddVolumeOptions `json:"addVolumeOptions,omitempty"`
	// RemoveVolumeOptions removes a volume.
	// +optional
	RemoveVolumeOptions *RemoveVolumeOptions `json:"removeVolumeOptions,omitempty"`
}

// AddVolumeOptions describe a volume to hotplug.
type AddVolumeOptions struct {
	// Name of the volume.
	Name string `json:"name"`
	// Disk is how the guest sees it.
	Disk *Disk `json:"disk"`
	// VolumeSource is the claim or DataVolume.
	VolumeSource *HotplugVolumeSource `json:"volumeSource"`
	// DryRun, when set to [All], checks the request without making it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// RemoveVolumeOptions name a volume to unplug.
type RemoveVolumeOptions struct {
	// Name of the volume.
	Name string `json:"name"`
	// DryRun, when set to [All], checks the request without making it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty"`
}

// HotplugVolumeSource is what a hotplugged volume is: a claim or a DataVolume.
type HotplugVolumeSource struct {
	// PersistentVolumeClaim is a claim in the VM's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// DataVolume is a DataVolume in the VM's namespace.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty"`
}

// VolumeSnapshotStatus says whether a volume can be snapshotted.
type VolumeSnapshotStatus struct {
	// Name of the volume.
	Name string `json:"name"`
	// Enabled is true when the volume can be snapshotted.
	Enabled bool `json:"enabled"`
	// Reason says why it cannot.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// MemoryDumpPhase is the state of a memory dump: Associating, InProgress, Unmounting, Completed,
// Dissociating or Failed.
type MemoryDumpPhase string

// VirtualMachineMemoryDumpRequest is a requested dump of the guest's memory to a claim.
type VirtualMachineMemoryDumpRequest struct {
	// ClaimName is the claim the dump is written to.
	ClaimName string `json:"claimName"`
	// Phase is the state of the dump.
	Phase MemoryDumpPhase `json:"phase"`
	// Remove asks for the claim to be detached.
	// +optional
	Remove bool `json:"remove,omitempty"`
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// FileName is the dump's file on the claim.
	// +optional
	FileName *string `json:"fileName,omitempty"`
	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}

// VolumeUpdateState is the state of a change of a VM's volumes.
type VolumeUpdateState struct {
	// VolumeMigrationState is the state of a storage migration.
	// +optional
	VolumeMigrationState *VolumeMigrationState `json:"volumeMigrationState,omitempty"`
}

// VolumeMigrationState lists the volumes a storage migration moves.
type VolumeMigrationState struct {
	// MigratedVolumes are the volumes moved.
	// +optional
	// +listType=atomic
	MigratedVolumes []StorageMigratedVolumeInfo `json:"migratedVolumes,omitempty"`
}

// StorageMigratedVolumeInfo is one volume a storage migration moves, from a claim to another.
type StorageMigratedVolumeInfo struct {
	// VolumeName is the volume's name in the VMI.
	VolumeName string `json:"volumeName"`
	// SourcePVCInfo is the claim it moves from.
	// +optional
	SourcePVCInfo *PersistentVolumeClaimInfo `json:"sourcePVCInfo,omitempty"`
	// DestinationPVCInfo is the claim it moves to.
	// +optional
	DestinationPVCInfo *PersistentVolumeClaimInfo `json:"destinationPVCInfo,omitempty"`
}

// PersistentVolumeClaimInfo describes the claim behind a volume.
type PersistentVolumeClaimInfo struct {
	// ClaimName is the claim's name.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// AccessModes of the claim.
	// +optional
	// +listType=atomic
	AccessModes []k8sv1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	// VolumeMode of the claim.
	// +optional
	VolumeMode *k8sv1.PersistentVolumeMode `json:"volumeMode,omitempty"`
	// Capacity of the claim's volume.
	// +optional
	Capacity k8sv1.ResourceList `json:"capacity,omitempty"`
	// Requests of the claim.
	// +optional
	Requests k8sv1.ResourceList `json:"requests,omitempty"`
	// Preallocated is true when the volume's space was allocated up front.
	// +optional
	Preallocated bool `json:"preallocated,omitempty"`
	// FilesystemOverhead is the share of a filesystem volume its filesystem takes.
	// +optional
	FilesystemOverhead *string `json:"filesystemOverhead,omitempty"`
}

// HotplugVolumeStatus names the Pod that attaches a hotplugged volume.
type HotplugVolumeStatus struct {
	// AttachPodName is the attachment Pod's name.
	// +optional
	AttachPodName string `json:"attachPodName,omitempty"`
	// AttachPodUID is its UID.
	// +optional
	AttachPodUID types.UID `json:"attachPodUID,omitempty"`
}

// DomainMemoryDumpInfo describes a memory dump volume.
type DomainMemoryDumpInfo struct {
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// ClaimName is the claim written to.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
	// TargetFileName is the dump's file.
	// +optional
	TargetFileName string `json:"targetFileName,omitempty"`
}

// ChangedBlockTrackingState is the state of changed block tracking: PendingRestart,
// Initializing, Enabled, Disabled or IncrementalBackupFeatureGateDisabled.
type ChangedBlockTrackingState string

// ChangedBlockTrackingStatus is the state of changed block tracking, for incremental backups.
type ChangedBlockTrackingStatus struct {
	// State of the tracking.
	State ChangedBlockTrackingState `json:"state"`
	// BackupStatus is the state of the current backup.
	// +optional
	BackupStatus *VirtualMachineInstanceBackupStatus `json:"backupStatus,omitempty"`
}

// VirtualMachineInstanceBackupStatus is the state of a backup of a VMI.
type VirtualMachineInstanceBackupStatus struct {
	// BackupName names the backup.
	// +optional
	BackupName string `json:"backupName,omitempty"`
	// StartTimestamp is when it started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty"`
	// Completed is true once it completed.
	// +optional
	Completed bool `json:"completed,omitempty"`
	// Failed is true when it failed.
	// +optional
	Failed bool `json:"failed,omitempty"`
	// BackupMsg explains the outcome.
	// +optional
	BackupMsg *string `json:"backupMsg,omitempty"`
	// CheckpointName is the checkpoint the backup made.
	// +optional
	CheckpointName *string `json:"checkpointName,omitempty"`
	// Volumes are the volumes backed up.
	// +optional
	// +listType=atomic
	Volumes []VirtualMachineInstanceBackupVolumeInfo `json:"volumes,omitempty"`
	// QuiesceStatus says whether the guest's filesystems were frozen.
	// +optional
	QuiesceStatus string `json:"quiesceStatus,omitempty"`
}

// VirtualMachineInstanceBackupVolumeInfo is one volume of a backup.
type VirtualMachineInstanceBackupVolumeInfo struct {
	// VolumeName is the volume's name in the VMI.
	VolumeName string `json:"volumeName"`
}
