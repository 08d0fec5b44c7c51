package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// This file mirrors the Kubernetes core/v1 storage types that a DataVolume embeds, with the same
// JSON wire format, so that apis/ depends only on k8s.io/apimachinery. (The kubevirt.io package
// imports this one, so these cannot be shared from there.)

// ResourceName names a resource; for volumes only "storage" is used.
type ResourceName string

const (
	// ResourceStorage is storage capacity, in bytes (for example "10Gi").
	ResourceStorage ResourceName = "storage"
)

// ResourceList maps resource names to quantities; same wire format as Kubernetes' core/v1 ResourceList.
type ResourceList map[ResourceName]resource.Quantity

// Storage returns the "storage" quantity, or zero when unset.
func (rl ResourceList) Storage() *resource.Quantity {
	if q, ok := rl[ResourceStorage]; ok {
		return &q
	}
	return &resource.Quantity{Format: resource.BinarySI}
}

// PersistentVolumeAccessMode is how a volume may be mounted by nodes.
type PersistentVolumeAccessMode string

const (
	// ReadWriteOnce lets one node mount the volume read-write.
	ReadWriteOnce PersistentVolumeAccessMode = "ReadWriteOnce"
	// ReadOnlyMany lets many nodes mount the volume read-only.
	ReadOnlyMany PersistentVolumeAccessMode = "ReadOnlyMany"
	// ReadWriteMany lets many nodes mount the volume read-write; live migration needs it.
	ReadWriteMany PersistentVolumeAccessMode = "ReadWriteMany"
	// ReadWriteOncePod lets one pod mount the volume read-write.
	ReadWriteOncePod PersistentVolumeAccessMode = "ReadWriteOncePod"
)

// PersistentVolumeMode is whether a volume is presented as a filesystem or a raw block device.
type PersistentVolumeMode string

const (
	// PersistentVolumeBlock presents the volume as a raw block device; the disk image is written to it directly.
	PersistentVolumeBlock PersistentVolumeMode = "Block"
	// PersistentVolumeFilesystem presents the volume as a filesystem; the disk image is the file disk.img on it.
	PersistentVolumeFilesystem PersistentVolumeMode = "Filesystem"
)

// VolumeResourceRequirements is the size requested for a volume.
type VolumeResourceRequirements struct {
	// Requests holds the requested size under the key "storage", such as "10Gi".
	// +optional
	Requests ResourceList `json:"requests,omitempty" protobuf:"bytes,1,rep,name=requests,casttype=ResourceList,castkey=ResourceName"`
}

// StorageSpec describes the PersistentVolumeClaim to create for a DataVolume. Unlike pvc, unset
// fields may be filled in from the storage class.
type StorageSpec struct {
	// AccessModes the volume must support, such as ReadWriteOnce or ReadWriteMany.
	// +optional
	// +listType=atomic
	AccessModes []PersistentVolumeAccessMode `json:"accessModes,omitempty" protobuf:"bytes,1,rep,name=accessModes,casttype=PersistentVolumeAccessMode"`
	// Resources holds the requested size of the volume under requests.storage.
	// +optional
	Resources VolumeResourceRequirements `json:"resources,omitempty" protobuf:"bytes,2,opt,name=resources"`
	// StorageClassName is the storage class of the volume; the cluster default is used when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty" protobuf:"bytes,3,opt,name=storageClassName"`
	// VolumeMode is Filesystem (the default) or Block.
	// +optional
	VolumeMode *PersistentVolumeMode `json:"volumeMode,omitempty" protobuf:"bytes,4,opt,name=volumeMode,casttype=PersistentVolumeMode"`
}

// PersistentVolumeClaimSpec describes, field for field, the PersistentVolumeClaim to create for a DataVolume.
type PersistentVolumeClaimSpec struct {
	// AccessModes the volume must support, such as ReadWriteOnce or ReadWriteMany.
	// +optional
	// +listType=atomic
	AccessModes []PersistentVolumeAccessMode `json:"accessModes,omitempty" protobuf:"bytes,1,rep,name=accessModes,casttype=PersistentVolumeAccessMode"`
	// Resources holds the requested size of the volume under requests.storage.
	// +optional
	Resources VolumeResourceRequirements `json:"resources,omitempty" protobuf:"bytes,2,opt,name=resources"`
	// StorageClassName is the storage class of the volume; the cluster default is used when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty" protobuf:"bytes,3,opt,name=storageClassName"`
	// VolumeMode is Filesystem (the default) or Block.
	// +optional
	VolumeMode *PersistentVolumeMode `json:"volumeMode,omitempty" protobuf:"bytes,4,opt,name=volumeMode,casttype=PersistentVolumeMode"`
}

// ConditionStatus is the truth value of a condition.
type ConditionStatus string

const (
	// ConditionTrue means the condition holds.
	ConditionTrue ConditionStatus = "True"
	// ConditionFalse means the condition does not hold.
	ConditionFalse ConditionStatus = "False"
	// ConditionUnknown means it is not known whether the condition holds.
	ConditionUnknown ConditionStatus = "Unknown"
)
