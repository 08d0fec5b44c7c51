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
	AddVolumeOptions *AddVolumeOptions `json:"addVolumeOptions,omitempty" protobuf:"bytes,1,opt,name=addVolumeOptions"`
	// RemoveVolumeOptions removes a volume.
	// +optional
	RemoveVolumeOptions *RemoveVolumeOptions `json:"removeVolumeOptions,omitempty" protobuf:"bytes,2,opt,name=removeVolumeOptions"`
}

// AddVolumeOptions describe a volume to hotplug.
type AddVolumeOptions struct {
	// Name of the volume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Disk is how the guest sees it.
	Disk *Disk `json:"disk" protobuf:"bytes,2,opt,name=disk"`
	// VolumeSource is the claim or DataVolume.
	VolumeSource *HotplugVolumeSource `json:"volumeSource" protobuf:"bytes,3,opt,name=volumeSource"`
	// DryRun, when set to [All], checks the request without making it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,4,rep,name=dryRun"`
}

// RemoveVolumeOptions name a volume to unplug.
type RemoveVolumeOptions struct {
	// Name of the volume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DryRun, when set to [All], checks the request without making it.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,2,rep,name=dryRun"`
}

// HotplugVolumeSource is what a hotplugged volume is: a claim or a DataVolume.
type HotplugVolumeSource struct {
	// PersistentVolumeClaim is a claim in the VM's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,1,opt,name=persistentVolumeClaim"`
	// DataVolume is a DataVolume in the VM's namespace.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty" protobuf:"bytes,2,opt,name=dataVolume"`
}

// VolumeSnapshotStatus says whether a volume can be snapshotted.
type VolumeSnapshotStatus struct {
	// Name of the volume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Enabled is true when the volume can be snapshotted.
	Enabled bool `json:"enabled" protobuf:"varint,2,opt,name=enabled"`
	// Reason says why it cannot.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
}

// MemoryDumpPhase is the state of a memory dump: Associating, InProgress, Unmounting, Completed,
// Dissociating or Failed.
type MemoryDumpPhase string

// VirtualMachineMemoryDumpRequest is a requested dump of the guest's memory to a claim.
type VirtualMachineMemoryDumpRequest struct {
	// ClaimName is the claim the dump is written to.
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	// Phase is the state of the dump.
	Phase MemoryDumpPhase `json:"phase" protobuf:"bytes,2,opt,name=phase,casttype=MemoryDumpPhase"`
	// Remove asks for the claim to be detached.
	// +optional
	Remove bool `json:"remove,omitempty" protobuf:"varint,3,opt,name=remove"`
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,4,opt,name=startTimestamp"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,5,opt,name=endTimestamp"`
	// FileName is the dump's file on the claim.
	// +optional
	FileName *string `json:"fileName,omitempty" protobuf:"bytes,6,opt,name=fileName"`
	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,7,opt,name=message"`
}

// VolumeUpdateState is the state of a change of a VM's volumes.
type VolumeUpdateState struct {
	// VolumeMigrationState is the state of a storage migration.
	// +optional
	VolumeMigrationState *VolumeMigrationState `json:"volumeMigrationState,omitempty" protobuf:"bytes,1,opt,name=volumeMigrationState"`
}

// VolumeMigrationState lists the volumes a storage migration moves.
type VolumeMigrationState struct {
	// MigratedVolumes are the volumes moved.
	// +optional
	// +listType=atomic
	MigratedVolumes []StorageMigratedVolumeInfo `json:"migratedVolumes,omitempty" protobuf:"bytes,1,rep,name=migratedVolumes"`
}

// StorageMigratedVolumeInfo is one volume a storage migration moves, from a claim to another.
type StorageMigratedVolumeInfo struct {
	// VolumeName is the volume's name in the VMI.
	VolumeName string `json:"volumeName" protobuf:"bytes,1,opt,name=volumeName"`
	// SourcePVCInfo is the claim it moves from.
	// +optional
	SourcePVCInfo *PersistentVolumeClaimInfo `json:"sourcePVCInfo,omitempty" protobuf:"bytes,2,opt,name=sourcePVCInfo"`
	// DestinationPVCInfo is the claim it moves to.
	// +optional
	DestinationPVCInfo *PersistentVolumeClaimInfo `json:"destinationPVCInfo,omitempty" protobuf:"bytes,3,opt,name=destinationPVCInfo"`
}

// PersistentVolumeClaimInfo describes the claim behind a volume.
type PersistentVolumeClaimInfo struct {
	// ClaimName is the claim's name.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,1,opt,name=claimName"`
	// AccessModes of the claim.
	// +optional
	// +listType=atomic
	AccessModes []k8sv1.PersistentVolumeAccessMode `json:"accessModes,omitempty" protobuf:"bytes,2,rep,name=accessModes,casttype=k8s.io/api/core/v1.PersistentVolumeAccessMode"`
	// VolumeMode of the claim.
	// +optional
	VolumeMode *k8sv1.PersistentVolumeMode `json:"volumeMode,omitempty" protobuf:"bytes,3,opt,name=volumeMode,casttype=k8s.io/api/core/v1.PersistentVolumeMode"`
	// Capacity of the claim's volume.
	// +optional
	Capacity k8sv1.ResourceList `json:"capacity,omitempty" protobuf:"bytes,4,rep,name=capacity,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// Requests of the claim.
	// +optional
	Requests k8sv1.ResourceList `json:"requests,omitempty" protobuf:"bytes,5,rep,name=requests,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// Preallocated is true when the volume's space was allocated up front.
	// +optional
	Preallocated bool `json:"preallocated,omitempty" protobuf:"varint,6,opt,name=preallocated"`
	// FilesystemOverhead is the share of a filesystem volume its filesystem takes.
	// +optional
	FilesystemOverhead *string `json:"filesystemOverhead,omitempty" protobuf:"bytes,7,opt,name=filesystemOverhead"`
}

// HotplugVolumeStatus names the Pod that attaches a hotplugged volume.
type HotplugVolumeStatus struct {
	// AttachPodName is the attachment Pod's name.
	// +optional
	AttachPodName string `json:"attachPodName,omitempty" protobuf:"bytes,1,opt,name=attachPodName"`
	// AttachPodUID is its UID.
	// +optional
	AttachPodUID types.UID `json:"attachPodUID,omitempty" protobuf:"bytes,2,opt,name=attachPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// DomainMemoryDumpInfo describes a memory dump volume.
type DomainMemoryDumpInfo struct {
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,1,opt,name=startTimestamp"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,2,opt,name=endTimestamp"`
	// ClaimName is the claim written to.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,3,opt,name=claimName"`
	// TargetFileName is the dump's file.
	// +optional
	TargetFileName string `json:"targetFileName,omitempty" protobuf:"bytes,4,opt,name=targetFileName"`
}

// ChangedBlockTrackingState is the state of changed block tracking: PendingRestart,
// Initializing, Enabled, Disabled or IncrementalBackupFeatureGateDisabled.
type ChangedBlockTrackingState string

// ChangedBlockTrackingStatus is the state of changed block tracking, for incremental backups.
type ChangedBlockTrackingStatus struct {
	// State of the tracking.
	State ChangedBlockTrackingState `json:"state" protobuf:"bytes,1,opt,name=state,casttype=ChangedBlockTrackingState"`
	// BackupStatus is the state of the current backup.
	// +optional
	BackupStatus *VirtualMachineInstanceBackupStatus `json:"backupStatus,omitempty" protobuf:"bytes,2,opt,name=backupStatus"`
}

// VirtualMachineInstanceBackupStatus is the state of a backup of a VMI.
type VirtualMachineInstanceBackupStatus struct {
	// BackupName names the backup.
	// +optional
	BackupName string `json:"backupName,omitempty" protobuf:"bytes,1,opt,name=backupName"`
	// StartTimestamp is when it started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,2,opt,name=startTimestamp"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,3,opt,name=endTimestamp"`
	// Completed is true once it completed.
	// +optional
	Completed bool `json:"completed,omitempty" protobuf:"varint,4,opt,name=completed"`
	// Failed is true when it failed.
	// +optional
	Failed bool `json:"failed,omitempty" protobuf:"varint,5,opt,name=failed"`
	// BackupMsg explains the outcome.
	// +optional
	BackupMsg *string `json:"backupMsg,omitempty" protobuf:"bytes,6,opt,name=backupMsg"`
	// CheckpointName is the checkpoint the backup made.
	// +optional
	CheckpointName *string `json:"checkpointName,omitempty" protobuf:"bytes,7,opt,name=checkpointName"`
	// Volumes are the volumes backed up.
	// +optional
	// +listType=atomic
	Volumes []VirtualMachineInstanceBackupVolumeInfo `json:"volumes,omitempty" protobuf:"bytes,8,rep,name=volumes"`
	// QuiesceStatus says whether the guest's filesystems were frozen.
	// +optional
	QuiesceStatus string `json:"quiesceStatus,omitempty" protobuf:"bytes,9,opt,name=quiesceStatus"`
}

// VirtualMachineInstanceBackupVolumeInfo is one volume of a backup.
type VirtualMachineInstanceBackupVolumeInfo struct {
	// VolumeName is the volume's name in the VMI.
	VolumeName string `json:"volumeName" protobuf:"bytes,1,opt,name=volumeName"`
}
