package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// MinSpinlockRetries is the fewest spinlock retries a Hyper-V guest may be given (KubeVirt's
// documented minimum; libvirt refuses fewer).
const MinSpinlockRetries = 4096

// maxVendorIDLength is the longest Hyper-V vendor ID, in characters (the CPUID leaf holds 12 bytes).
const maxVendorIDLength = 12

// hpetTickPolicies, pitTickPolicies, rtcTickPolicies and rtcTracks are the values libvirt accepts
// for each timer.
var (
	hpetTickPolicies = []v1.HPETTickPolicy{v1.HPETTickPolicyDelay, v1.HPETTickPolicyCatchup, v1.HPETTickPolicyMerge, v1.HPETTickPolicyDiscard}
	pitTickPolicies  = []v1.PITTickPolicy{v1.PITTickPolicyDelay, v1.PITTickPolicyCatchup, v1.PITTickPolicyDiscard}
	rtcTickPolicies  = []v1.RTCTickPolicy{v1.RTCTickPolicyDelay, v1.RTCTickPolicyCatchup}
	rtcTracks        = []v1.RTCTimerTrack{v1.TrackGuest, v1.TrackWall}
)

// validateFeatures checks the Hyper-V enlightenments.
func validateFeatures(f *v1.Features, fldPath *field.Path) field.ErrorList {
	if f.Hyperv == nil {
		return nil
	}
	return validateHyperv(f.Hyperv, fldPath.Child("hyperv"))
}

// featureOn reports whether an optional feature is present and not switched off.
func featureOn(fs *v1.FeatureState) bool { return fs != nil && enabled(fs.Enabled) }

// featureOff reports whether an optional feature is present and explicitly switched off.
func featureOff(fs *v1.FeatureState) bool { return fs != nil && fs.Enabled != nil && !*fs.Enabled }

// hypervDependency is a Hyper-V enlightenment that only works together with another one.
type hypervDependency struct {
	feature, needs         *v1.FeatureState
	featureName, needsName string
}

// validateHyperv checks the spinlock retries and vendor ID, and that no enlightenment is on while
// one it needs is switched off (synic needs vpindex; synictimer needs synic; tlbflush and ipi
// need vpindex), as KubeVirt does. A needed enlightenment that is merely left out is fine:
// KubeVirt turns it on.
func validateHyperv(h *v1.FeatureHyperv, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s := h.Spinlocks; s != nil && enabled(s.Enabled) && s.Retries != nil && *s.Retries < MinSpinlockRetries {
		errs = append(errs, field.Invalid(fldPath.Child("spinlocks", "spinlocks"), *s.Retries,
			fmt.Sprintf("must be at least %d", MinSpinlockRetries)))
	}
	if v := h.VendorID; v != nil && len(v.VendorID) > maxVendorIDLength {
		e := field.TooLong(fldPath.Child("vendorid", "vendorid"), "", maxVendorIDLength)
		e.Detail = fmt.Sprintf("%q is %d characters; a Hyper-V vendor ID has at most %d", v.VendorID, len(v.VendorID), maxVendorIDLength)
		errs = append(errs, e)
	}
	var synicTimer, tlbFlush *v1.FeatureState
	if h.SyNICTimer != nil {
		synicTimer = &h.SyNICTimer.FeatureState
	}
	if h.TLBFlush != nil {
		tlbFlush = &h.TLBFlush.FeatureState
	}
	for _, d := range []hypervDependency{
		{h.SyNIC, h.VPIndex, "synic", "vpindex"},
		{synicTimer, h.SyNIC, "synictimer", "synic"},
		{tlbFlush, h.VPIndex, "tlbflush", "vpindex"},
		{h.IPI, h.VPIndex, "ipi", "vpindex"},
	} {
		if featureOn(d.feature) && featureOff(d.needs) {
			errs = append(errs, field.Invalid(fldPath.Child(d.featureName), "enabled", fmt.Sprintf(
				"%s needs %s, which is disabled; enable %s or disable %s", d.featureName, d.needsName, d.needsName, d.featureName)))
		}
	}
	return errs
}

// validateClock checks that at most one clock offset is given, that a time zone is named, and
// that timer settings are values libvirt knows.
func validateClock(c *v1.Clock, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.UTC != nil && c.Timezone != nil {
		errs = append(errs, field.Invalid(fldPath, "utc and timezone",
			"the clock offset is either utc or timezone; set only one of them"))
	}
	if c.Timezone != nil && *c.Timezone == "" {
		errs = append(errs, field.Required(fldPath.Child("timezone"),
			"name a time zone, such as Europe/Berlin, or remove timezone"))
	}
	t := c.Timer
	if t == nil {
		return errs
	}
	tPath := fldPath.Child("timer")
	if t.HPET != nil {
		errs = append(errs, fieldcheck.OptionalEnum(t.HPET.TickPolicy, hpetTickPolicies, tPath.Child("hpet", "tickPolicy"))...)
	}
	if t.PIT != nil {
		errs = append(errs, fieldcheck.OptionalEnum(t.PIT.TickPolicy, pitTickPolicies, tPath.Child("pit", "tickPolicy"))...)
	}
	if t.RTC != nil {
		errs = append(errs, fieldcheck.OptionalEnum(t.RTC.TickPolicy, rtcTickPolicies, tPath.Child("rtc", "tickPolicy"))...)
		errs = append(errs, fieldcheck.OptionalEnum(t.RTC.Track, rtcTracks, tPath.Child("rtc", "track"))...)
	}
	return errs
}
