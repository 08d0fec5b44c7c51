package v1

import "k8s.io/apimachinery/pkg/api/resource"

// DefaultConfigVolumeLabel is the volume label of a configMap, secret, serviceAccount or
// downwardAPI disk whose volumeLabel is empty, as KubeVirt labels them.
const DefaultConfigVolumeLabel = "cfgdata"

// ConfigMapVolumeSource gives the guest a ConfigMap of the VMI's namespace as a disk: an ISO
// image with one file per key.
type ConfigMapVolumeSource struct {
	// LocalObjectReference names the ConfigMap.
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	// Optional lets the VMI start when the ConfigMap does not exist (the disk is then empty).
	// +optional
	Optional *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
	// VolumeLabel is the disk's volume label inside the guest, such as "cidata", "config-2" or
	// "OEMDRV"; at most 32 characters. Defaults to "cfgdata".
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,3,opt,name=volumeLabel"`
}

// SecretVolumeSource gives the guest a Secret of the VMI's namespace as a disk: an ISO image
// with one file per key.
type SecretVolumeSource struct {
	// SecretName is the name of the Secret.
	// +optional
	SecretName string `json:"secretName,omitempty" protobuf:"bytes,1,opt,name=secretName"`
	// Optional lets the VMI start when the Secret does not exist (the disk is then empty).
	// +optional
	Optional *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
	// VolumeLabel is the disk's volume label inside the guest; at most 32 characters. Defaults
	// to "cfgdata".
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,3,opt,name=volumeLabel"`
}

// ServiceAccountVolumeSource gives the guest a ServiceAccount's credentials as a disk holding
// the files a Pod sees under /var/run/secrets/kubernetes.io/serviceaccount: token, ca.crt and
// namespace. The launcher Pod runs as that ServiceAccount, so a VMI has at most one such volume.
type ServiceAccountVolumeSource struct {
	// ServiceAccountName is the name of the ServiceAccount, in the VMI's namespace.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,1,opt,name=serviceAccountName"`
}

// DownwardAPIVolumeSource gives the guest facts of its launcher Pod (which carries the VMI's
// labels) as a disk with one file per field.
type DownwardAPIVolumeSource struct {
	// Fields are the files of the disk.
	// +optional
	// +listType=atomic
	Fields []DownwardAPIVolumeFile `json:"fields,omitempty" protobuf:"bytes,1,rep,name=fields"`
	// VolumeLabel is the disk's volume label inside the guest; at most 32 characters. Defaults
	// to "cfgdata".
	// +optional
	VolumeLabel string `json:"volumeLabel,omitempty" protobuf:"bytes,2,opt,name=volumeLabel"`
}

// DownwardAPIVolumeFile is one file of a downwardAPI disk (Kubernetes' DownwardAPIVolumeFile).
type DownwardAPIVolumeFile struct {
	// Path is the file's relative path on the disk: no "..", not absolute, at most 4096 bytes.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// FieldRef selects a field of the launcher Pod: metadata.name, metadata.namespace,
	// metadata.uid, metadata.labels, metadata.annotations, or one label or annotation
	// (metadata.labels['KEY']).
	// +optional
	FieldRef *ObjectFieldSelector `json:"fieldRef,omitempty" protobuf:"bytes,2,opt,name=fieldRef"`
	// ResourceFieldRef selects a resource of the launcher's container ("compute"): limits.cpu,
	// limits.memory, requests.cpu, requests.memory and their ephemeral-storage counterparts.
	// +optional
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty" protobuf:"bytes,3,opt,name=resourceFieldRef"`
	// Mode is the file's permission bits in the launcher Pod (0 to 0777); the guest sees every
	// file of the disk read-only.
	// +optional
	Mode *int32 `json:"mode,omitempty" protobuf:"varint,4,opt,name=mode"`
}

// ObjectFieldSelector selects a field of an object (Kubernetes' ObjectFieldSelector).
type ObjectFieldSelector struct {
	// APIVersion of the schema FieldPath is written in; defaults to "v1".
	// +optional
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,1,opt,name=apiVersion"`
	// FieldPath is the path of the field to select.
	FieldPath string `json:"fieldPath" protobuf:"bytes,2,opt,name=fieldPath"`
}

// ResourceFieldSelector selects a container's resource (Kubernetes' ResourceFieldSelector).
type ResourceFieldSelector struct {
	// ContainerName is the container's name; the launcher's is "compute".
	// +optional
	ContainerName string `json:"containerName,omitempty" protobuf:"bytes,1,opt,name=containerName"`
	// Resource to select, such as limits.memory.
	Resource string `json:"resource" protobuf:"bytes,2,opt,name=resource"`
	// Divisor is the unit the value is given in; defaults to "1".
	// +optional
	Divisor resource.Quantity `json:"divisor,omitempty" protobuf:"bytes,3,opt,name=divisor"`
}
