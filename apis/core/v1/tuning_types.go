package v1

import "k8s.io/apimachinery/pkg/api/resource"

// CPU, memory, I/O and confidential-computing tuning as KubeVirt spells it. Stored as written;
// what Vireo cannot run fails the VMI when it would start (reason Unsupported).

// CPUFeature turns one CPU feature flag on or off for the guest.
type CPUFeature struct {
	// Name of the feature, as libvirt knows it (such as "vmx" or "pcid").
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Policy is force, require, optional, disable or forbid. Defaults to require.
	// +optional
	Policy string `json:"policy,omitempty" protobuf:"bytes,2,opt,name=policy"`
}

// NUMA sets the guest's NUMA topology.
type NUMA struct {
	// GuestMappingPassthrough mirrors the host's NUMA nodes of the guest's dedicated CPUs and
	// hugepages into the guest.
	// +optional
	GuestMappingPassthrough *NUMAGuestMappingPassthrough `json:"guestMappingPassthrough,omitempty" protobuf:"bytes,1,opt,name=guestMappingPassthrough"`
}

// NUMAGuestMappingPassthrough selects that mapping; it has no settings.
type NUMAGuestMappingPassthrough struct{}

// Realtime tunes dedicated vCPUs for realtime workloads.
type Realtime struct {
	// Mask selects the vCPUs that run with a realtime scheduler, such as "0-3,^1".
	// +optional
	Mask string `json:"mask,omitempty" protobuf:"bytes,1,opt,name=mask"`
}

// Hugepages backs the guest's memory with huge pages.
type Hugepages struct {
	// PageSize is the huge page size, such as 2Mi or 1Gi.
	// +optional
	PageSize string `json:"pageSize,omitempty" protobuf:"bytes,1,opt,name=pageSize"`
}

// MemLockRequirement says whether the guest's memory must be locked: Required or NotRequired.
type MemLockRequirement string

// ReservedOverhead is memory the launcher Pod reserves above the guest's memory.
type ReservedOverhead struct {
	// AddedOverhead is added to the computed overhead.
	// +optional
	AddedOverhead *resource.Quantity `json:"addedOverhead,omitempty" protobuf:"bytes,1,opt,name=addedOverhead"`
	// MemLock says whether the guest's memory must be locked.
	// +optional
	MemLock *MemLockRequirement `json:"memLock,omitempty" protobuf:"bytes,2,opt,name=memLock,casttype=MemLockRequirement"`
}

// IOThreadsPolicy is how disks share I/O threads: shared, auto or supplementalPool.
type IOThreadsPolicy string

// DiskIOThreads configures the supplementalPool policy.
type DiskIOThreads struct {
	// SupplementalPoolThreadCount is the number of I/O threads in the pool.
	// +optional
	SupplementalPoolThreadCount *uint32 `json:"supplementalPoolThreadCount,omitempty" protobuf:"varint,1,opt,name=supplementalPoolThreadCount"`
}

// RebootPolicy is what a guest's reboot does: Reboot (the default) or Terminate.
type RebootPolicy string

// LaunchSecurity runs the guest with encrypted memory; at most one technology may be set.
type LaunchSecurity struct {
	// SEV is AMD Secure Encrypted Virtualization.
	// +optional
	SEV *SEV `json:"sev,omitempty" protobuf:"bytes,1,opt,name=sev"`
	// SNP is AMD SEV with Secure Nested Paging.
	// +optional
	SNP *SEVSNP `json:"snp,omitempty" protobuf:"bytes,2,opt,name=snp"`
	// TDX is Intel Trust Domain Extensions.
	// +optional
	TDX *TDX `json:"tdx,omitempty" protobuf:"bytes,3,opt,name=tdx"`
}

// SEV configures AMD SEV.
type SEV struct {
	// Policy is the guest's SEV policy.
	// +optional
	Policy *SEVPolicy `json:"policy,omitempty" protobuf:"bytes,1,opt,name=policy"`
	// Attestation starts the guest paused for a remote attestation.
	// +optional
	Attestation *SEVAttestation `json:"attestation,omitempty" protobuf:"bytes,2,opt,name=attestation"`
	// Session is the base64 session blob of the guest owner.
	// +optional
	Session string `json:"session,omitempty" protobuf:"bytes,3,opt,name=session"`
	// DHCert is the base64 Diffie-Hellman certificate of the guest owner.
	// +optional
	DHCert string `json:"dhCert,omitempty" protobuf:"bytes,4,opt,name=dhCert"`
}

// SEVPolicy is an SEV guest policy.
type SEVPolicy struct {
	// EncryptedState also encrypts the CPU registers (SEV-ES). Defaults to false.
	// +optional
	EncryptedState *bool `json:"encryptedState,omitempty" protobuf:"varint,1,opt,name=encryptedState"`
}

// SEVAttestation selects attestation; it has no settings.
type SEVAttestation struct{}

// SEVSNP selects SEV-SNP; it has no settings.
type SEVSNP struct{}

// TDX selects Intel TDX; it has no settings.
type TDX struct{}

// DriverIO is a disk's I/O mode: native, threads or default.
type DriverIO string

// DiskErrorPolicy is what the guest sees on a disk error: stop, ignore, report or enospace.
type DiskErrorPolicy string

// BlockSize sets the block sizes a disk reports to the guest.
type BlockSize struct {
	// Custom sets them explicitly.
	// +optional
	Custom *CustomBlockSize `json:"custom,omitempty" protobuf:"bytes,1,opt,name=custom"`
	// MatchVolume takes them from the volume.
	// +optional
	MatchVolume *FeatureState `json:"matchVolume,omitempty" protobuf:"bytes,2,opt,name=matchVolume"`
}

// CustomBlockSize is a disk's block sizes, in bytes.
type CustomBlockSize struct {
	// +optional
	Logical uint32 `json:"logical,omitempty" protobuf:"varint,1,opt,name=logical"`
	// +optional
	Physical uint32 `json:"physical,omitempty" protobuf:"varint,2,opt,name=physical"`
	// +optional
	DiscardGranularity *uint32 `json:"discardGranularity,omitempty" protobuf:"varint,3,opt,name=discardGranularity"`
}
