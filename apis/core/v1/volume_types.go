package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is a named source of disk data that a disk in spec.domain.devices.disks can attach.
type Volume struct {
	// Name of the volume; disks refer to it by this name. Must be a DNS-1123 label, unique within the VMI.
	Name string `json:"name"`
	// VolumeSource is where the volume's data comes from. Exactly one source must be set.
	VolumeSource `json:",inline"`
}

// VolumeSource is where a volume's data comes from. Only one field may be set.
type VolumeSource struct {
	// HostDisk is a disk image file on the node's own filesystem. Stored and validated; not run by
	// Vireo's launcher yet (KubeVirt keeps it behind its HostDisk feature gate).
	// +optional
	HostDisk *HostDisk `json:"hostDisk,omitempty"`
	// ContainerDisk is a disk image shipped in a container image. The guest writes to a temporary
	// overlay, so changes are lost when the VMI stops.
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty"`
	// PersistentVolumeClaim attaches the disk.img file (filesystem mode) or the device (block mode)
	// of a PersistentVolumeClaim in the VMI's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// DataVolume attaches the PersistentVolumeClaim populated by a DataVolume in the VMI's namespace.
	// The VMI waits until the DataVolume has finished importing.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty"`
	// CloudInitNoCloud passes user-data and network-data to the guest on a NoCloud "cidata" ISO.
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty"`
	// EmptyDisk is a new, empty, sparse disk that is discarded when the VMI stops.
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty"`
}

// HostDiskType says whether a host disk image must already exist or may be created.
type HostDiskType string

const (
	// HostDiskExists needs the disk image to exist at the path already.
	HostDiskExists HostDiskType = "Disk"
	// HostDiskExistsOrCreate creates a sparse disk image of the given capacity when none exists at the path.
	HostDiskExistsOrCreate HostDiskType = "DiskOrCreate"
)

// HostDisk is a disk image file on the node that runs the VMI.
type HostDisk struct {
	// Path is the absolute path of the disk image on the node, such as /var/lib/images/disk.img.
	Path string `json:"path"`
	// Type is Disk (the image must exist) or DiskOrCreate (it is created when missing).
	Type HostDiskType `json:"type"`
	// Capacity is the size of the image to create; required with DiskOrCreate and not allowed with Disk.
	// +optional
	Capacity resource.Quantity `json:"capacity,omitempty"`
	// Shared says the path is on storage shared between nodes, so the VMI can be live-migrated.
	// +optional
	Shared *bool `json:"shared,omitempty"`
}

// ContainerDiskSource is a disk image inside a container image, under /disk/ (raw or qcow2).
type ContainerDiskSource struct {
	// Image is the container image reference, such as "registry.example.com/images/fedora:41".
	Image string `json:"image"`
	// Path of the disk image inside the container image, absolute and without "." or ".."
	// components. Defaults to the single file under /disk/.
	// +optional
	Path string `json:"path,omitempty"`
	// ImagePullPolicy is Always, Never or IfNotPresent. Defaults to Always for the "latest" tag or
	// an untagged image, else IfNotPresent.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty"`
	// ImagePullSecret names a Secret of type kubernetes.io/dockerconfigjson in the VMI's
	// namespace holding the registry credentials to pull Image with; it becomes one of the
	// launcher Pod's imagePullSecrets. The kubelet verifies that a Pod may use an image another
	// Pod pulled with credentials before it mounts the node's copy.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
}

// PersistentVolumeClaimVolumeSource refers to a PersistentVolumeClaim in the VMI's namespace.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the name of the PersistentVolumeClaim.
	ClaimName string `json:"claimName"`
	// ReadOnly attaches the volume read-only. Defaults to false.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}

// DataVolumeSource refers to a DataVolume in the VMI's namespace.
type DataVolumeSource struct {
	// Name of the DataVolume.
	Name string `json:"name"`
}

// CloudInitNoCloudSource is cloud-init configuration delivered on a NoCloud ISO. Exactly one of
// userData, userDataBase64 and secretRef should be set.
type CloudInitNoCloudSource struct {
	// UserDataSecretRef names a Secret in the VMI's namespace whose "userdata" (or "userData") key
	// holds the user-data; use it for user-data larger than 2048 bytes.
	// +optional
	UserDataSecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// UserDataBase64 is the user-data, base64-encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty"`
	// UserData is the user-data as plain text, at most 2048 bytes.
	// +optional
	UserData string `json:"userData,omitempty"`
	// NetworkData is the network configuration (netplan v1 or v2) as plain text, at most 2048 bytes.
	// +optional
	NetworkData string `json:"networkData,omitempty"`
	// NetworkDataSecretRef names a Secret in the VMI's namespace whose "networkdata" (or
	// "networkData") key holds the network configuration; use it for data larger than 2048 bytes.
	// +optional
	NetworkDataSecretRef *LocalObjectReference `json:"networkDataSecretRef,omitempty"`
}

// EmptyDiskSource is a temporary, sparse, empty disk.
type EmptyDiskSource struct {
	// Capacity is the size of the disk, such as "10Gi".
	Capacity resource.Quantity `json:"capacity"`
}
