package domain

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// timezonePattern is what a time zone name looks like, such as "America/New_York" or "UTC+1".
var timezonePattern = regexp.MustCompile(`^[A-Za-z0-9_+/-]+$`)

// features returns the <features> element: ACPI (on unless turned off, as graceful shutdown
// needs it), APIC and SMM when asked for, and under TCG the bounded translation-block cache.
// Hyper-V enlightenments are refused: the launcher does not run them yet.
func features(domain *v1.DomainSpec, in Inputs, fPath *field.Path) (*libvirtxml.DomainFeatureList, field.ErrorList) {
	out := &libvirtxml.DomainFeatureList{}
	if in.Emulation == EmulationTCG && in.TCGCacheMiB > 0 {
		out.TCG = &libvirtxml.DomainFeatureTCG{
			TBCache: &libvirtxml.DomainFeatureTCGTBCache{Unit: "MiB", Size: in.TCGCacheMiB},
		}
	}
	f := domain.Features
	if f == nil {
		out.ACPI = &libvirtxml.DomainFeature{}
		return out, nil
	}
	var errs field.ErrorList
	if boolOr(f.ACPI.Enabled, true) {
		out.ACPI = &libvirtxml.DomainFeature{}
	}
	if a := f.APIC; a != nil {
		switch {
		case !boolOr(a.Enabled, true):
			errs = append(errs, field.Forbidden(fPath.Child("apic", "enabled"),
				"x86 guests on q35 always have an APIC; it cannot be turned off"))
		case a.EndOfInterrupt && in.Emulation == EmulationTCG:
			errs = append(errs, field.Invalid(fPath.Child("apic", "endOfInterrupt"), true,
				"paravirtual end-of-interrupt needs hardware virtualization (KVM), and this node runs guests "+
					"under software emulation (TCG); remove endOfInterrupt"))
		case a.EndOfInterrupt:
			out.APIC = &libvirtxml.DomainFeatureAPIC{EOI: "on"}
		default:
			out.APIC = &libvirtxml.DomainFeatureAPIC{}
		}
	}
	if s := f.SMM; s != nil {
		out.SMM = &libvirtxml.DomainFeatureSMM{State: onOff(boolOr(s.Enabled, true))}
	}
	if f.Hyperv != nil {
		errs = append(errs, field.Forbidden(fPath.Child("hyperv"),
			"Vireo's launcher does not run Hyper-V enlightenments yet; remove hyperv"))
	}
	return out, errs
}

// clock returns the <clock> element: UTC (libvirt's default) unless the VMI asks for a UTC
// offset, which the guest may then change and keep across reboots (libvirt's variable offset),
// or a time zone; and the timers the VMI lists. The paravirtual KVM and Hyper-V clocks need
// KVM and are refused under TCG.
func clock(c *v1.Clock, emulation Emulation, cPath *field.Path) (*libvirtxml.DomainClock, field.ErrorList) {
	out := &libvirtxml.DomainClock{Offset: "utc"}
	if c == nil {
		return out, nil
	}
	var errs field.ErrorList
	switch {
	case c.UTC != nil && c.Timezone != nil:
		errs = append(errs, field.Invalid(cPath, "utc and timezone", "set only one of utc and timezone"))
	case c.UTC != nil && c.UTC.OffsetSeconds != nil:
		out.Offset, out.Basis, out.Adjustment = "variable", "utc", strconv.FormatInt(*c.UTC.OffsetSeconds, 10)
	case c.Timezone != nil:
		tz := string(*c.Timezone)
		if !timezonePattern.MatchString(tz) {
			errs = append(errs, field.Invalid(cPath.Child("timezone"), tz,
				"must be a time zone name such as Europe/Berlin"))
		}
		out.Offset, out.TimeZone = "timezone", tz
	}
	if t := c.Timer; t != nil {
		var e field.ErrorList
		out.Timer, e = timers(t, emulation, cPath.Child("timer"))
		errs = append(errs, e...)
	}
	return out, errs
}

// timers converts the VMI's timers, in a fixed order.
func timers(t *v1.Timer, emulation Emulation, tPath *field.Path) ([]libvirtxml.DomainTimer, field.ErrorList) {
	var out []libvirtxml.DomainTimer
	var errs field.ErrorList
	if h := t.HPET; h != nil {
		errs = append(errs, checkEnum(string(h.TickPolicy), tPath.Child("hpet", "tickPolicy"), "delay", "catchup", "merge", "discard")...)
		out = append(out, libvirtxml.DomainTimer{Name: "hpet", TickPolicy: string(h.TickPolicy), Present: yesNo(boolOr(h.Enabled, true))})
	}
	if k := t.KVM; k != nil {
		present := boolOr(k.Enabled, true)
		if present && emulation == EmulationTCG {
			errs = append(errs, field.Invalid(tPath.Child("kvm", "present"), true,
				"the KVM clock needs hardware virtualization (KVM), and this node runs guests under software emulation (TCG)"))
		}
		out = append(out, libvirtxml.DomainTimer{Name: "kvmclock", Present: yesNo(present)})
	}
	if p := t.PIT; p != nil {
		errs = append(errs, checkEnum(string(p.TickPolicy), tPath.Child("pit", "tickPolicy"), "delay", "catchup", "discard")...)
		out = append(out, libvirtxml.DomainTimer{Name: "pit", TickPolicy: string(p.TickPolicy), Present: yesNo(boolOr(p.Enabled, true))})
	}
	if r := t.RTC; r != nil {
		errs = append(errs, checkEnum(string(r.TickPolicy), tPath.Child("rtc", "tickPolicy"), "delay", "catchup")...)
		errs = append(errs, checkEnum(string(r.Track), tPath.Child("rtc", "track"), "guest", "wall")...)
		out = append(out, libvirtxml.DomainTimer{Name: "rtc", TickPolicy: string(r.TickPolicy), Track: string(r.Track),
			Present: yesNo(boolOr(r.Enabled, true))})
	}
	if h := t.Hyperv; h != nil {
		present := boolOr(h.Enabled, true)
		if present && emulation == EmulationTCG {
			errs = append(errs, field.Invalid(tPath.Child("hyperv", "present"), true,
				"the Hyper-V clock needs hardware virtualization (KVM), and this node runs guests under software emulation (TCG)"))
		}
		out = append(out, libvirtxml.DomainTimer{Name: "hypervclock", Present: yesNo(present)})
	}
	return out, errs
}

// checkEnum returns an error when value is set and not one of allowed.
func checkEnum(value string, fPath *field.Path, allowed ...string) field.ErrorList {
	if value == "" {
		return nil
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fPath, value, allowed)}
}

// onOff returns libvirt's "on" or "off".
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// yesNo returns libvirt's "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
