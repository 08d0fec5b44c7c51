package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DataVolume is a PersistentVolumeClaim together with the data to fill it with: Vireo creates the
// claim and imports a disk image into it (over HTTP, from a registry, by upload, by cloning another
// claim, or as a blank disk).
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataVolume struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is where the data comes from and what volume to put it in.
	Spec DataVolumeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed progress of the import. It is written by Vireo only.
	// +optional
	Status DataVolumeStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DataVolumeList is a list of DataVolumes.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type DataVolumeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the DataVolumes in the list.
	Items []DataVolume `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// DataVolumeContentType is what kind of data a DataVolume's source holds.
type DataVolumeContentType string

const (
	// DataVolumeKubeVirt is a virtual machine disk image (raw, qcow2, ...), converted to a raw disk.img.
	DataVolumeKubeVirt DataVolumeContentType = "kubevirt"
	// DataVolumeArchive is a tar archive, extracted into a filesystem volume.
	DataVolumeArchive DataVolumeContentType = "archive"
)

// DataVolumeSpec is the desired state of a DataVolume.
type DataVolumeSpec struct {
	// Source is where the data comes from. Exactly one source must be set.
	// +optional
	Source *DataVolumeSource `json:"source,omitempty" protobuf:"bytes,1,opt,name=source"`
	// Storage describes the volume to create; unset fields may be filled in from the storage class.
	// Exactly one of storage and pvc must be set.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty" protobuf:"bytes,2,opt,name=storage"`
	// PVC describes the PersistentVolumeClaim to create, exactly as given.
	// Exactly one of storage and pvc must be set.
	// +optional
	PVC *PersistentVolumeClaimSpec `json:"pvc,omitempty" protobuf:"bytes,3,opt,name=pvc"`
	// ContentType is kubevirt (a disk image, the default) or archive (a tar archive).
	// +optional
	ContentType DataVolumeContentType `json:"contentType,omitempty" protobuf:"bytes,4,opt,name=contentType,casttype=DataVolumeContentType"`
}

// DataVolumeSource is where a DataVolume's data comes from. Only one field may be set.
type DataVolumeSource struct {
	// HTTP imports an image from an http or https URL.
	// +optional
	HTTP *DataVolumeSourceHTTP `json:"http,omitempty" protobuf:"bytes,1,opt,name=http"`
	// Registry imports the disk image under /disk/ of a container image.
	// +optional
	Registry *DataVolumeSourceRegistry `json:"registry,omitempty" protobuf:"bytes,2,opt,name=registry"`
	// Upload waits for an image to be uploaded through the upload subresource.
	// +optional
	Upload *DataVolumeSourceUpload `json:"upload,omitempty" protobuf:"bytes,3,opt,name=upload"`
	// Blank creates an empty raw disk filling the volume.
	// +optional
	Blank *DataVolumeBlankImage `json:"blank,omitempty" protobuf:"bytes,4,opt,name=blank"`
	// PVC clones another PersistentVolumeClaim.
	// +optional
	PVC *DataVolumeSourcePVC `json:"pvc,omitempty" protobuf:"bytes,5,opt,name=pvc"`
}

// DataVolumeSourceHTTP imports an image from an http or https URL.
type DataVolumeSourceHTTP struct {
	// URL of the image, with scheme http or https. gz and xz compression is detected and undone.
	URL string `json:"url" protobuf:"bytes,1,opt,name=url"`
	// SecretRef names a Secret in the DataVolume's namespace with keys accessKeyId and secretKey,
	// sent as basic authentication.
	// +optional
	SecretRef string `json:"secretRef,omitempty" protobuf:"bytes,2,opt,name=secretRef"`
	// CertConfigMap names a ConfigMap in the DataVolume's namespace holding extra CA certificates to
	// trust for the server.
	// +optional
	CertConfigMap string `json:"certConfigMap,omitempty" protobuf:"bytes,3,opt,name=certConfigMap"`
	// ExtraHeaders are extra HTTP request headers, each in the form "Name: value".
	// +optional
	// +listType=atomic
	ExtraHeaders []string `json:"extraHeaders,omitempty" protobuf:"bytes,4,rep,name=extraHeaders"`
	// SecretExtraHeaders name Secrets in the DataVolume's namespace whose every value is an extra
	// HTTP request header, "Name: value", for headers that carry credentials.
	// +optional
	// +listType=atomic
	SecretExtraHeaders []string `json:"secretExtraHeaders,omitempty" protobuf:"bytes,5,rep,name=secretExtraHeaders"`
	// InsecureSkipVerify skips the verification of an https server's certificate (a Vireo
	// addition; certConfigMap is the safe way to trust a private CA).
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty" protobuf:"varint,6,opt,name=insecureSkipVerify"`
	// Checksum, when set, is the expected digest of the file exactly as downloaded (before
	// decompression or format conversion), as "algorithm:hex" with algorithm md5, sha1, sha256
	// or sha512, such as "sha256:9f86d0...0a08"; the import fails when it does not match.
	// +optional
	Checksum string `json:"checksum,omitempty" protobuf:"bytes,7,opt,name=checksum"`
}

// DataVolumeSourceRegistry imports the disk image stored under /disk/ in a container image.
type DataVolumeSourceRegistry struct {
	// URL of the image, in the form "docker://registry.example.com/image:tag".
	// +optional
	URL *string `json:"url,omitempty" protobuf:"bytes,1,opt,name=url"`
	// SecretRef names a Secret in the DataVolume's namespace with keys accessKeyId (user name) and
	// secretKey (password) for the registry.
	// +optional
	SecretRef *string `json:"secretRef,omitempty" protobuf:"bytes,2,opt,name=secretRef"`
}

// DataVolumeSourceUpload waits for the image to be uploaded; it has no settings.
type DataVolumeSourceUpload struct{}

// DataVolumeBlankImage creates an empty raw disk; it has no settings.
type DataVolumeBlankImage struct{}

// DataVolumeSourcePVC names the PersistentVolumeClaim to clone.
type DataVolumeSourcePVC struct {
	// Namespace of the claim to clone.
	Namespace string `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	// Name of the claim to clone.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`
}

// DataVolumePhase is the lifecycle state of a DataVolume.
type DataVolumePhase string

const (
	// PhaseUnset is the phase of a DataVolume that has not been processed yet.
	PhaseUnset DataVolumePhase = ""
	// Pending means the DataVolume was accepted and its claim is being created.
	Pending DataVolumePhase = "Pending"
	// PVCBound means the claim is bound to a volume.
	PVCBound DataVolumePhase = "PVCBound"
	// ImportScheduled means the importer pod was created but has not started.
	ImportScheduled DataVolumePhase = "ImportScheduled"
	// ImportInProgress means the importer is writing the data; see status.progress.
	ImportInProgress DataVolumePhase = "ImportInProgress"
	// CloneScheduled means the pod copying the source claim was created but has not started.
	CloneScheduled DataVolumePhase = "CloneScheduled"
	// CloneInProgress means the source claim's data is being copied; see status.progress.
	CloneInProgress DataVolumePhase = "CloneInProgress"
	// UploadScheduled means the upload server pod was created but is not ready.
	UploadScheduled DataVolumePhase = "UploadScheduled"
	// UploadReady means an upload can be sent.
	UploadReady DataVolumePhase = "UploadReady"
	// WaitForFirstConsumer means the claim's storage class binds volumes only once a pod uses them.
	WaitForFirstConsumer DataVolumePhase = "WaitForFirstConsumer"
	// Paused means the population is paused.
	Paused DataVolumePhase = "Paused"
	// Succeeded means the volume holds the data and is ready to use.
	Succeeded DataVolumePhase = "Succeeded"
	// Failed means the population failed; the conditions say why.
	Failed DataVolumePhase = "Failed"
	// Unknown means the state could not be determined.
	Unknown DataVolumePhase = "Unknown"
)

// DataVolumeProgress is how far the population has got, as a percentage such as "45.23%", or "N/A".
type DataVolumeProgress string

// DataVolumeConditionType names a condition of a DataVolume.
type DataVolumeConditionType string

const (
	// DataVolumeBound is True when the claim is bound to a volume.
	DataVolumeBound DataVolumeConditionType = "Bound"
	// DataVolumeReady is True when the volume holds the data and is ready to use.
	DataVolumeReady DataVolumeConditionType = "Ready"
	// DataVolumeRunning is True while an importer or upload pod is running.
	DataVolumeRunning DataVolumeConditionType = "Running"
)

// DataVolumeCondition is one observed condition of a DataVolume.
type DataVolumeCondition struct {
	// Type of the condition: Bound, Ready or Running.
	Type DataVolumeConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=DataVolumeConditionType"`
	// Status of the condition: True, False or Unknown.
	Status ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	// LastTransitionTime is when the status of the condition last changed.
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	// LastHeartbeatTime is when the condition was last checked.
	// +optional
	// +nullable
	LastHeartbeatTime metav1.Time `json:"lastHeartbeatTime,omitempty" protobuf:"bytes,4,opt,name=lastHeartbeatTime"`
	// Reason is a CamelCase, machine-readable cause of the condition's status.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// Message explains the condition's status to humans.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// DataVolumeStatus is the observed state of a DataVolume.
type DataVolumeStatus struct {
	// Phase is the lifecycle state of the DataVolume.
	// +optional
	Phase DataVolumePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=DataVolumePhase"`
	// Progress is how far the population has got, such as "45.23%", or "N/A" when unknown.
	// +optional
	Progress DataVolumeProgress `json:"progress,omitempty" protobuf:"bytes,2,opt,name=progress,casttype=DataVolumeProgress"`
	// Conditions are the current observed conditions of the DataVolume, one per type.
	// Server-side apply merges them by type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []DataVolumeCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// RestartCount is how many times the importer pod has restarted.
	// +optional
	RestartCount int32 `json:"restartCount,omitempty" protobuf:"varint,4,opt,name=restartCount"`
	// ClaimName is the name of the PersistentVolumeClaim that holds the data.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,5,opt,name=claimName"`
}
