package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume is a named source of disk data that a disk in spec.domain.devices.disks can attach.
type Volume struct {
	// Name of the volume; disks refer to it by this name. Must be a DNS-1123 label, unique within the VMI.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// VolumeSource is where the volume's data comes from. Exactly one source must be set.
	VolumeSource `json:",inline" protobuf:"bytes,2,opt,name=volumeSource"`
}

// VolumeSource is where a volume's data comes from. Only one field may be set.
type VolumeSource struct {
	// HostDisk is a disk image file on the node's own filesystem. Stored and validated; not run by
	// Vireo's launcher yet (KubeVirt keeps it behind its HostDisk feature gate).
	// +optional
	HostDisk *HostDisk `json:"hostDisk,omitempty" protobuf:"bytes,1,opt,name=hostDisk"`
	// ContainerDisk is a disk image shipped in a container image. The guest writes to a temporary
	// overlay, so changes are lost when the VMI stops.
	// +optional
	ContainerDisk *ContainerDiskSource `json:"containerDisk,omitempty" protobuf:"bytes,2,opt,name=containerDisk"`
	// PersistentVolumeClaim attaches the disk.img file (filesystem mode) or the device (block mode)
	// of a PersistentVolumeClaim in the VMI's namespace.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,3,opt,name=persistentVolumeClaim"`
	// DataVolume attaches the PersistentVolumeClaim populated by a DataVolume in the VMI's namespace.
	// The VMI waits until the DataVolume has finished importing.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty" protobuf:"bytes,4,opt,name=dataVolume"`
	// CloudInitNoCloud passes user-data and network-data to the guest on a NoCloud "cidata" ISO.
	// +optional
	CloudInitNoCloud *CloudInitNoCloudSource `json:"cloudInitNoCloud,omitempty" protobuf:"bytes,5,opt,name=cloudInitNoCloud"`
	// CloudInitConfigDrive passes user-data and network-data to the guest on an OpenStack
	// config drive (a "config-2" ISO with openstack/latest/user_data, meta_data.json and
	// network_data.json), for guests whose cloud-init or cloudbase-init reads only that.
	// +optional
	CloudInitConfigDrive *CloudInitConfigDriveSource `json:"cloudInitConfigDrive,omitempty" protobuf:"bytes,6,opt,name=cloudInitConfigDrive"`
	// EmptyDisk is a new, empty, sparse disk that is discarded when the VMI stops.
	// +optional
	EmptyDisk *EmptyDiskSource `json:"emptyDisk,omitempty" protobuf:"bytes,7,opt,name=emptyDisk"`
	// ConfigMap is a ConfigMap of the VMI's namespace as an ISO disk, one file per key.
	// +optional
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty" protobuf:"bytes,8,opt,name=configMap"`
	// Secret is a Secret of the VMI's namespace as an ISO disk, one file per key.
	// +optional
	Secret *SecretVolumeSource `json:"secret,omitempty" protobuf:"bytes,9,opt,name=secret"`
	// ServiceAccount is a ServiceAccount's token, CA certificate and namespace as an ISO disk.
	// +optional
	ServiceAccount *ServiceAccountVolumeSource `json:"serviceAccount,omitempty" protobuf:"bytes,10,opt,name=serviceAccount"`
	// DownwardAPI is facts of the launcher Pod (labels, annotations, name, resources) as an
	// ISO disk.
	// +optional
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty" protobuf:"bytes,11,opt,name=downwardAPI"`
	// Sysprep is a Windows answer file from a ConfigMap or Secret, as a CD-ROM.
	// +optional
	Sysprep *SysprepSource `json:"sysprep,omitempty" protobuf:"bytes,12,opt,name=sysprep"`
	// Ephemeral is a claim used copy-on-write: the guest's writes are dropped when it stops.
	// +optional
	Ephemeral *EphemeralVolumeSource `json:"ephemeral,omitempty" protobuf:"bytes,13,opt,name=ephemeral"`
	// DownwardMetrics is a disk with the host's metrics about the guest.
	// +optional
	DownwardMetrics *DownwardMetricsVolumeSource `json:"downwardMetrics,omitempty" protobuf:"bytes,14,opt,name=downwardMetrics"`
	// MemoryDump is a claim that receives a dump of the guest's memory.
	// +optional
	MemoryDump *MemoryDumpVolumeSource `json:"memoryDump,omitempty" protobuf:"bytes,15,opt,name=memoryDump"`
	// ContainerPath is a path of the launcher's container shared with the guest.
	// +optional
	ContainerPath *ContainerPathVolumeSource `json:"containerPath,omitempty" protobuf:"bytes,16,opt,name=containerPath"`
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
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// Type is Disk (the image must exist) or DiskOrCreate (it is created when missing).
	Type HostDiskType `json:"type" protobuf:"bytes,2,opt,name=type,casttype=HostDiskType"`
	// Capacity is the size of the image to create; required with DiskOrCreate and not allowed with Disk.
	// +optional
	Capacity resource.Quantity `json:"capacity,omitempty" protobuf:"bytes,3,opt,name=capacity"`
	// Shared says the path is on storage shared between nodes, so the VMI can be live-migrated.
	// +optional
	Shared *bool `json:"shared,omitempty" protobuf:"varint,4,opt,name=shared"`
}

// ContainerDiskSource is a disk image inside a container image, under /disk/ (raw or qcow2).
type ContainerDiskSource struct {
	// Image is the container image reference, such as "registry.example.com/images/fedora:41".
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
	// Path of the disk image inside the container image, absolute and without "." or ".."
	// components. Defaults to the single file under /disk/.
	// +optional
	Path string `json:"path,omitempty" protobuf:"bytes,2,opt,name=path"`
	// ImagePullPolicy is Always, Never or IfNotPresent. Defaults to Always for the "latest" tag or
	// an untagged image, else IfNotPresent.
	// +optional
	ImagePullPolicy PullPolicy `json:"imagePullPolicy,omitempty" protobuf:"bytes,3,opt,name=imagePullPolicy,casttype=PullPolicy"`
	// ImagePullSecret names a Secret of type kubernetes.io/dockerconfigjson in the VMI's
	// namespace holding the registry credentials to pull Image with; it becomes one of the
	// launcher Pod's imagePullSecrets. The kubelet verifies that a Pod may use an image another
	// Pod pulled with credentials before it mounts the node's copy.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty" protobuf:"bytes,4,opt,name=imagePullSecret"`
}

// PersistentVolumeClaimVolumeSource refers to a PersistentVolumeClaim in the VMI's namespace.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the name of the PersistentVolumeClaim.
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	// ReadOnly attaches the volume read-only. Defaults to false.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
	// Hotpluggable marks a volume attached while the guest runs.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty" protobuf:"varint,3,opt,name=hotpluggable"`
}

// DataVolumeSource refers to a DataVolume in the VMI's namespace.
type DataVolumeSource struct {
	// Name of the DataVolume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Hotpluggable marks a volume attached while the guest runs.
	// +optional
	Hotpluggable bool `json:"hotpluggable,omitempty" protobuf:"varint,2,opt,name=hotpluggable"`
}

// CloudInitNoCloudSource is cloud-init configuration delivered on a NoCloud ISO. Exactly one of
// userData, userDataBase64 and secretRef should be set.
type CloudInitNoCloudSource struct {
	// UserDataSecretRef names a Secret in the VMI's namespace whose "userdata" (or "userData") key
	// holds the user-data; use it for user-data larger than 2048 bytes.
	// +optional
	UserDataSecretRef *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,1,opt,name=secretRef"`
	// UserDataBase64 is the user-data, base64-encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty" protobuf:"bytes,2,opt,name=userDataBase64"`
	// UserData is the user-data as plain text, at most 2048 bytes.
	// +optional
	UserData string `json:"userData,omitempty" protobuf:"bytes,3,opt,name=userData"`
	// NetworkData is the network configuration (netplan v1 or v2) as plain text, at most 2048 bytes.
	// +optional
	NetworkData string `json:"networkData,omitempty" protobuf:"bytes,4,opt,name=networkData"`
	// NetworkDataBase64 is the network configuration, base64-encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty" protobuf:"bytes,5,opt,name=networkDataBase64"`
	// NetworkDataSecretRef names a Secret in the VMI's namespace whose "networkdata" (or
	// "networkData") key holds the network configuration; use it for data larger than 2048 bytes.
	// +optional
	NetworkDataSecretRef *LocalObjectReference `json:"networkDataSecretRef,omitempty" protobuf:"bytes,6,opt,name=networkDataSecretRef"`
}

// CloudInitConfigDriveSource is cloud-init configuration delivered on an OpenStack config
// drive. Its fields are CloudInitNoCloudSource's: at most one of userData, userDataBase64 and
// secretRef, at most one of networkData, networkDataBase64 and networkDataSecretRef.
type CloudInitConfigDriveSource struct {
	// UserDataSecretRef names a Secret in the VMI's namespace whose "userdata" (or "userData") key
	// holds the user-data; use it for user-data larger than 2048 bytes.
	// +optional
	UserDataSecretRef *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,1,opt,name=secretRef"`
	// UserDataBase64 is the user-data, base64-encoded.
	// +optional
	UserDataBase64 string `json:"userDataBase64,omitempty" protobuf:"bytes,2,opt,name=userDataBase64"`
	// UserData is the user-data as plain text, at most 2048 bytes.
	// +optional
	UserData string `json:"userData,omitempty" protobuf:"bytes,3,opt,name=userData"`
	// NetworkData is the network configuration (OpenStack's network_data.json) as plain text, at
	// most 2048 bytes.
	// +optional
	NetworkData string `json:"networkData,omitempty" protobuf:"bytes,4,opt,name=networkData"`
	// NetworkDataBase64 is the network configuration, base64-encoded.
	// +optional
	NetworkDataBase64 string `json:"networkDataBase64,omitempty" protobuf:"bytes,5,opt,name=networkDataBase64"`
	// NetworkDataSecretRef names a Secret in the VMI's namespace whose "networkdata" (or
	// "networkData") key holds the network configuration; use it for data larger than 2048 bytes.
	// +optional
	NetworkDataSecretRef *LocalObjectReference `json:"networkDataSecretRef,omitempty" protobuf:"bytes,6,opt,name=networkDataSecretRef"`
}

// CloudInit is the volume's cloud-init data, NoCloud or config drive, in NoCloud's form (the
// two have the same fields), and the source's field name ("cloudInitNoCloud" or
// "cloudInitConfigDrive"); nil and "" when the volume has neither.
func (s *VolumeSource) CloudInit() (*CloudInitNoCloudSource, string) {
	switch {
	case s.CloudInitNoCloud != nil:
		return s.CloudInitNoCloud, "cloudInitNoCloud"
	case s.CloudInitConfigDrive != nil:
		c := s.CloudInitConfigDrive
		return &CloudInitNoCloudSource{UserDataSecretRef: c.UserDataSecretRef, UserDataBase64: c.UserDataBase64, UserData: c.UserData,
			NetworkData: c.NetworkData, NetworkDataBase64: c.NetworkDataBase64, NetworkDataSecretRef: c.NetworkDataSecretRef}, "cloudInitConfigDrive"
	}
	return nil, ""
}

// EmptyDiskSource is a temporary, sparse, empty disk.
type EmptyDiskSource struct {
	// Capacity is the size of the disk, such as "10Gi".
	Capacity resource.Quantity `json:"capacity" protobuf:"bytes,1,opt,name=capacity"`
}
