package defaults

import v1 "github.com/vireo-dev/vireo/apis/core/v1"

// DefaultSpinlockRetries is how many times a Hyper-V guest spins on a lock before it notifies the
// hypervisor, when it enables spinlocks without a count (KubeVirt's default and minimum).
const DefaultSpinlockRetries uint32 = 4096

// setFeatureDefaults turns on every platform feature that is given without saying whether it is
// enabled, as KubeVirt's defaulters do: ACPI (always present, so on unless turned off: graceful
// shutdown needs it), APIC, SMM and the Hyper-V enlightenments; enabled spinlocks get
// DefaultSpinlockRetries.
func setFeatureDefaults(domain *v1.DomainSpec) {
	if domain.Features == nil {
		domain.Features = &v1.Features{}
	}
	f := domain.Features
	enable(&f.ACPI)
	if f.APIC != nil {
		enable(&f.APIC.FeatureState)
	}
	enableIfPresent(f.SMM)
	if f.Hyperv != nil {
		setHypervDefaults(f.Hyperv)
	}
}

// setHypervDefaults turns on the Hyper-V enlightenments that are present without an enabled flag.
// tlbflush's own flag is left alone, as KubeVirt leaves it; its direct and extended parts default on.
func setHypervDefaults(h *v1.FeatureHyperv) {
	for _, s := range []*v1.FeatureState{h.Relaxed, h.VAPIC, h.VPIndex, h.Runtime, h.SyNIC, h.ResetFeature, h.Frequencies, h.Reenlightenment, h.IPI} {
		enableIfPresent(s)
	}
	if h.Spinlocks != nil {
		enable(&h.Spinlocks.FeatureState)
		if *h.Spinlocks.Enabled && h.Spinlocks.Retries == nil {
			retries := DefaultSpinlockRetries
			h.Spinlocks.Retries = &retries
		}
	}
	if h.VendorID != nil {
		enable(&h.VendorID.FeatureState)
	}
	if h.SyNICTimer != nil {
		enable(&h.SyNICTimer.FeatureState)
		enableIfPresent(h.SyNICTimer.Direct)
	}
	if h.TLBFlush != nil {
		enableIfPresent(h.TLBFlush.Direct)
		enableIfPresent(h.TLBFlush.Extended)
	}
}

// setClockDefaults marks every timer that is listed without a present flag as present.
func setClockDefaults(clock *v1.Clock) {
	if clock == nil || clock.Timer == nil {
		return
	}
	t := clock.Timer
	if t.HPET != nil {
		setTrue(&t.HPET.Enabled)
	}
	if t.KVM != nil {
		setTrue(&t.KVM.Enabled)
	}
	if t.PIT != nil {
		setTrue(&t.PIT.Enabled)
	}
	if t.RTC != nil {
		setTrue(&t.RTC.Enabled)
	}
	if t.Hyperv != nil {
		setTrue(&t.Hyperv.Enabled)
	}
}

// enable turns a feature on unless the user said whether it is.
func enable(s *v1.FeatureState) { setTrue(&s.Enabled) }

// enableIfPresent enables a feature that is given; an absent one stays absent.
func enableIfPresent(s *v1.FeatureState) {
	if s != nil {
		enable(s)
	}
}

// setTrue sets an unset flag to true.
func setTrue(b **bool) {
	if *b == nil {
		t := true
		*b = &t
	}
}
