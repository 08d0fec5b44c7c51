package v1

// Volume kinds and claims of KubeVirt's that Vireo stores as written; a VMI that uses one fails
// when it would start, with reason Unsupported naming the field.

// ClaimVolumeSource is a PersistentVolumeClaim by name, as Kubernetes' core/v1
// PersistentVolumeClaimVolumeSource spells it.
type ClaimVolumeSource struct {
	// ClaimName is the claim's name in the VMI's namespace.
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	// ReadOnly attaches it read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
}

// SysprepSource is a Windows answer file (autounattend.xml or unattend.xml).
type SysprepSource struct {
	// Secret holding it.
	// +optional
	Secret *LocalObjectReference `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
	// ConfigMap holding it.
	// +optional
	ConfigMap *LocalObjectReference `json:"configMap,omitempty" protobuf:"bytes,2,opt,name=configMap"`
}

// EphemeralVolumeSource uses a claim copy-on-write.
type EphemeralVolumeSource struct {
	// PersistentVolumeClaim is the claim.
	// +optional
	PersistentVolumeClaim *ClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,1,opt,name=persistentVolumeClaim"`
}

// DownwardMetricsVolumeSource selects the metrics disk; it has no settings.
type DownwardMetricsVolumeSource struct{}

// MemoryDumpVolumeSource is the claim a memory dump is written to.
type MemoryDumpVolumeSource struct {
	PersistentVolumeClaimVolumeSource `json:",inline" protobuf:"bytes,1,opt,name=persistentVolumeClaimVolumeSource"`
}

// ContainerPathVolumeSource is a path in the launcher's container.
type ContainerPathVolumeSource struct {
	// Path in the container.
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
	// ReadOnly shares it read-only. Defaults to true.
	// +optional
	ReadOnly *bool `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
}

// UtilityVolumeType is what a utility volume is for, such as MemoryDump.
type UtilityVolumeType string

// UtilityVolume is a claim mounted into the launcher Pod for a utility, not shown to the guest.
type UtilityVolume struct {
	// Name of the utility volume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// ClaimVolumeSource is the claim.
	ClaimVolumeSource `json:",inline" protobuf:"bytes,2,opt,name=claimVolumeSource"`
	// Type is what it is for.
	// +optional
	Type *UtilityVolumeType `json:"type,omitempty" protobuf:"bytes,3,opt,name=type,casttype=UtilityVolumeType"`
}

// VirtualMachineInstanceResourceClaim is a dynamic resource claim (DRA) the launcher Pod takes.
type VirtualMachineInstanceResourceClaim struct {
	// Name of the claim within the VMI, which devices name in claimName.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// ResourceClaimName names an existing ResourceClaim.
	// +optional
	ResourceClaimName *string `json:"resourceClaimName,omitempty" protobuf:"bytes,2,opt,name=resourceClaimName"`
	// ResourceClaimTemplateName names a ResourceClaimTemplate to make one from.
	// +optional
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty" protobuf:"bytes,3,opt,name=resourceClaimTemplateName"`
}

// DNSPolicy is how the launcher Pod's DNS is set up: ClusterFirst, ClusterFirstWithHostNet,
// Default or None.
type DNSPolicy string

// PodDNSConfig adds to the DNS configuration of the launcher Pod, as core/v1 spells it.
type PodDNSConfig struct {
	// Nameservers are DNS server addresses.
	// +optional
	// +listType=atomic
	Nameservers []string `json:"nameservers,omitempty" protobuf:"bytes,1,rep,name=nameservers"`
	// Searches are DNS search domains.
	// +optional
	// +listType=atomic
	Searches []string `json:"searches,omitempty" protobuf:"bytes,2,rep,name=searches"`
	// Options are resolver options.
	// +optional
	// +listType=atomic
	Options []PodDNSConfigOption `json:"options,omitempty" protobuf:"bytes,3,rep,name=options"`
}

// PodDNSConfigOption is one resolver option.
type PodDNSConfigOption struct {
	// Name of the option, such as ndots.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Value of the option.
	// +optional
	Value *string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
}
