package v1

// Features turns optional platform features of the guest on or off. Every feature given without
// "enabled" is on; a feature that is left out keeps the machine type's setting. hyperv is stored
// and validated but not run by Vireo's launcher yet: vireo-controller fails a VMI that sets it
// when it would start (reason Unsupported), rather than run it without it.
type Features struct {
	// ACPI exposes ACPI to the guest, which graceful shutdown needs. Enabled by default.
	// +optional
	ACPI FeatureState `json:"acpi,omitempty" protobuf:"bytes,1,opt,name=acpi"`
	// APIC exposes an advanced programmable interrupt controller. Defaults to the machine type's
	// setting; on x86 it cannot be turned off.
	// +optional
	APIC *FeatureAPIC `json:"apic,omitempty" protobuf:"bytes,2,opt,name=apic"`
	// Hyperv turns on Hyper-V enlightenments, paravirtual interfaces that make Windows guests
	// faster. Defaults to the machine type's setting. Stored and validated; not run by Vireo's
	// launcher yet.
	// +optional
	Hyperv *FeatureHyperv `json:"hyperv,omitempty" protobuf:"bytes,3,opt,name=hyperv"`
	// SMM turns on System Management Mode, which EFI secure boot needs.
	// +optional
	SMM *FeatureState `json:"smm,omitempty" protobuf:"bytes,4,opt,name=smm"`
	// HypervPassthrough gives the guest every Hyper-V enlightenment the host offers.
	// +optional
	HypervPassthrough *HyperVPassthrough `json:"hypervPassthrough,omitempty" protobuf:"bytes,5,opt,name=hypervPassthrough"`
	// KVM hides or shows the KVM hypervisor signature.
	// +optional
	KVM *FeatureKVM `json:"kvm,omitempty" protobuf:"bytes,6,opt,name=kvm"`
	// Pvspinlock turns paravirtual spinlocks on or off.
	// +optional
	Pvspinlock *FeatureState `json:"pvspinlock,omitempty" protobuf:"bytes,7,opt,name=pvspinlock"`
}

// HyperVPassthrough passes every Hyper-V enlightenment through.
type HyperVPassthrough struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
}

// FeatureKVM configures the KVM signature the guest sees.
type FeatureKVM struct {
	// Hidden hides the signature (some GPU drivers refuse to run under a hypervisor).
	// +optional
	Hidden bool `json:"hidden,omitempty" protobuf:"varint,1,opt,name=hidden"`
}

// FeatureState switches a platform feature on or off.
type FeatureState struct {
	// Enabled turns the feature on (true, the default) or off (false).
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
}

// FeatureAPIC configures the guest's advanced programmable interrupt controller.
type FeatureAPIC struct {
	// FeatureState turns the APIC on (the default) or off.
	FeatureState `json:",inline" protobuf:"bytes,1,opt,name=featureState"`
	// EndOfInterrupt enables end-of-interrupt notification in the guest. Defaults to false.
	// +optional
	EndOfInterrupt bool `json:"endOfInterrupt,omitempty" protobuf:"varint,2,opt,name=endOfInterrupt"`
}

// FeatureSpinlocks configures the Hyper-V paravirtual spinlock enlightenment.
type FeatureSpinlocks struct {
	// FeatureState turns the enlightenment on (the default) or off.
	FeatureState `json:",inline" protobuf:"bytes,1,opt,name=featureState"`
	// Retries is how many times the guest spins on a lock before it notifies the hypervisor;
	// at least 4096. Defaults to 4096.
	// +optional
	Retries *uint32 `json:"spinlocks,omitempty" protobuf:"varint,2,opt,name=spinlocks"`
}

// FeatureVendorID sets the hypervisor vendor ID the guest sees through Hyper-V.
type FeatureVendorID struct {
	// FeatureState turns the vendor ID on (the default) or off.
	FeatureState `json:",inline" protobuf:"bytes,1,opt,name=featureState"`
	// VendorID is the vendor ID the guest sees, at most 12 characters.
	// +optional
	VendorID string `json:"vendorid,omitempty" protobuf:"bytes,2,opt,name=vendorid"`
}

// SyNICTimer configures the Hyper-V synthetic timers, which lower the CPU load of idle guests.
type SyNICTimer struct {
	// FeatureState turns the synthetic timers on (the default) or off. They need synic.
	FeatureState `json:",inline" protobuf:"bytes,1,opt,name=featureState"`
	// Direct delivers timer expirations as interrupts rather than as messages.
	// +optional
	Direct *FeatureState `json:"direct,omitempty" protobuf:"bytes,2,opt,name=direct"`
}

// TLBFlush configures the Hyper-V paravirtual TLB flush, which helps overcommitted hosts.
type TLBFlush struct {
	// FeatureState turns the paravirtual TLB flush on (the default) or off. It needs vpindex.
	FeatureState `json:",inline" protobuf:"bytes,1,opt,name=featureState"`
	// Direct sends TLB flushes straight to the hypervisor; helps nested virtualization such as
	// Windows virtualization-based security.
	// +optional
	Direct *FeatureState `json:"direct,omitempty" protobuf:"bytes,2,opt,name=direct"`
	// Extended lets the guest flush only part of the TLB.
	// +optional
	Extended *FeatureState `json:"extended,omitempty" protobuf:"bytes,3,opt,name=extended"`
}

// FeatureHyperv lists the Hyper-V enlightenments offered to the guest. Each defaults to the
// machine type's setting; some need others (see each field).
type FeatureHyperv struct {
	// Relaxed tells the guest to disable watchdog timeouts that a busy host could trigger.
	// +optional
	Relaxed *FeatureState `json:"relaxed,omitempty" protobuf:"bytes,1,opt,name=relaxed"`
	// VAPIC improves the paravirtualized handling of interrupts.
	// +optional
	VAPIC *FeatureState `json:"vapic,omitempty" protobuf:"bytes,2,opt,name=vapic"`
	// Spinlocks configures how long the guest spins on a lock before yielding.
	// +optional
	Spinlocks *FeatureSpinlocks `json:"spinlocks,omitempty" protobuf:"bytes,3,opt,name=spinlocks"`
	// VPIndex gives each virtual processor an index that the guest can use in hypercalls.
	// +optional
	VPIndex *FeatureState `json:"vpindex,omitempty" protobuf:"bytes,4,opt,name=vpindex"`
	// Runtime lets the guest account for the time its vCPUs were not running.
	// +optional
	Runtime *FeatureState `json:"runtime,omitempty" protobuf:"bytes,5,opt,name=runtime"`
	// SyNIC enables the synthetic interrupt controller. Needs vpindex.
	// +optional
	SyNIC *FeatureState `json:"synic,omitempty" protobuf:"bytes,6,opt,name=synic"`
	// SyNICTimer enables the synthetic timers. Needs synic.
	// +optional
	SyNICTimer *SyNICTimer `json:"synictimer,omitempty" protobuf:"bytes,7,opt,name=synictimer"`
	// ResetFeature lets the guest reset the machine through Hyper-V (KubeVirt's Go field is
	// Reset; protobuf's generated Reset method takes that name here, the wire name is the same).
	// +optional
	ResetFeature *FeatureState `json:"reset,omitempty" protobuf:"bytes,8,opt,name=reset"`
	// VendorID sets the hypervisor vendor ID the guest sees.
	// +optional
	VendorID *FeatureVendorID `json:"vendorid,omitempty" protobuf:"bytes,9,opt,name=vendorid"`
	// Frequencies exposes the TSC and APIC frequencies to the guest.
	// +optional
	Frequencies *FeatureState `json:"frequencies,omitempty" protobuf:"bytes,10,opt,name=frequencies"`
	// Reenlightenment notifies the guest when the TSC frequency changes, as after a migration.
	// +optional
	Reenlightenment *FeatureState `json:"reenlightenment,omitempty" protobuf:"bytes,11,opt,name=reenlightenment"`
	// TLBFlush enables the paravirtual TLB flush. Needs vpindex.
	// +optional
	TLBFlush *TLBFlush `json:"tlbflush,omitempty" protobuf:"bytes,12,opt,name=tlbflush"`
	// IPI enables paravirtual inter-processor interrupts. Needs vpindex.
	// +optional
	IPI *FeatureState `json:"ipi,omitempty" protobuf:"bytes,13,opt,name=ipi"`
	// EVMCS is enlightened VMCS, for nested virtualization in a Hyper-V guest.
	// +optional
	EVMCS *FeatureState `json:"evmcs,omitempty" protobuf:"bytes,14,opt,name=evmcs"`
}
