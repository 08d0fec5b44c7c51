package validation

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// MinGuestMemory is the least memory, in bytes, a guest may be given (KubeVirt's 1M).
const MinGuestMemory int64 = 1000 * 1000

// EmulatedMachines are the glob patterns a machine type must match (KubeVirt's amd64 default).
var EmulatedMachines = []string{"q35*", "pc-q35*"}

// pullPolicies are the allowed image pull policies.
var pullPolicies = []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever}

// validateDomain validates the guest's virtual hardware; sized says an instancetype gives the
// memory (what the domain sets of it is still checked).
func validateDomain(domain *v1.DomainSpec, fldPath *field.Path, sized bool) field.ErrorList {
	var errs field.ErrorList
	if m := memoryOf(domain); !sized || m.request != nil || m.limit != nil || m.guest != nil {
		errs = append(errs, validateMemory(domain, fldPath)...)
	}
	errs = append(errs, validateCPU(domain, fldPath)...)
	if m := domain.Machine; m != nil && m.Type != "" && !machineTypeSupported(m.Type) {
		errs = append(errs, field.Invalid(fldPath.Child("machine", "type"), m.Type,
			"unsupported machine type; it must match one of "+strings.Join(EmulatedMachines, ", ")+", such as q35"))
	}
	if domain.Firmware != nil {
		errs = append(errs, validateFirmware(domain.Firmware, fldPath.Child("firmware"))...)
	}
	errs = append(errs, validateSecureBootNeedsSMM(domain, fldPath)...)
	if domain.Features != nil {
		errs = append(errs, validateFeatures(domain.Features, fldPath.Child("features"))...)
	}
	if domain.Clock != nil {
		errs = append(errs, validateClock(domain.Clock, fldPath.Child("clock"))...)
	}
	return append(errs, validateVideo(&domain.Devices, fldPath.Child("devices"))...)
}

// VideoTypes are the video models KubeVirt accepts on amd64 (Vireo's display runs vga; a VMI
// asking for another fails Unsupported).
var VideoTypes = []string{"vga", "cirrus", "virtio", "ramfb", "bochs"}

// validateVideo refuses, as KubeVirt does, a video device without a graphics device and a video
// model amd64 does not have.
func validateVideo(devices *v1.Devices, fldPath *field.Path) field.ErrorList {
	if devices.Video == nil {
		return nil
	}
	var errs field.ErrorList
	if devices.AutoattachGraphicsDevice != nil && !*devices.AutoattachGraphicsDevice {
		errs = append(errs, field.Invalid(fldPath.Child("video"), "", "a video device needs the graphics device: autoattachGraphicsDevice is false"))
	}
	if !slices.Contains(VideoTypes, devices.Video.Type) {
		errs = append(errs, field.NotSupported(fldPath.Child("video", "type"), devices.Video.Type, VideoTypes))
	}
	return errs
}

// machineTypeSupported reports whether machineType matches one of EmulatedMachines.
func machineTypeSupported(machineType string) bool {
	for _, pattern := range EmulatedMachines {
		if ok, _ := path.Match(pattern, machineType); ok {
			return true
		}
	}
	return false
}

// memoryAmounts are the memory quantities of a domain; a zero or missing request or limit is
// "not given", as in KubeVirt.
type memoryAmounts struct {
	request, limit, guest *resource.Quantity
}

// positive reports whether q is given and greater than zero.
func positive(q *resource.Quantity) bool { return q != nil && q.Sign() > 0 }

// memoryOf collects the memory request, limit and guest memory of domain.
func memoryOf(domain *v1.DomainSpec) memoryAmounts {
	var m memoryAmounts
	if q, ok := domain.Resources.Requests[v1.ResourceMemory]; ok {
		m.request = &q
	}
	if q, ok := domain.Resources.Limits[v1.ResourceMemory]; ok {
		m.limit = &q
	}
	if domain.Memory != nil {
		m.guest = domain.Memory.Guest
	}
	return m
}

// validateMemory checks, as KubeVirt does, that the guest gets memory; that no amount is
// negative; that a memory request, when not zero, is at least 1M; and that neither the request nor
// the guest memory exceeds a (non-zero) limit. A request of 0 is accepted, as in KubeVirt, when
// the guest memory is given. Vireo also refuses guest memory below 1M, which no guest can boot with.
func validateMemory(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	resPath := fldPath.Child("resources")
	reqPath, limPath, guestPath := resPath.Child("requests", "memory"), resPath.Child("limits", "memory"), fldPath.Child("memory", "guest")
	m := memoryOf(domain)
	if !positive(m.request) && !positive(m.limit) && !positive(m.guest) && !negative(m.request, m.limit, m.guest) {
		return field.ErrorList{field.Required(reqPath,
			"no memory requested: set at least one of spec.domain.resources.requests.memory, "+
				"spec.domain.resources.limits.memory and spec.domain.memory.guest")}
	}
	var errs field.ErrorList
	if m.request != nil {
		errs = append(errs, validateMemoryQuantity(*m.request, reqPath, true)...)
	}
	if m.limit != nil {
		errs = append(errs, validateNonNegativeQuantity(*m.limit, limPath)...)
	}
	if m.guest != nil {
		errs = append(errs, validateMemoryQuantity(*m.guest, guestPath, false)...)
	}
	if positive(m.limit) && m.request != nil && m.request.Cmp(*m.limit) > 0 {
		errs = append(errs, field.Invalid(reqPath, m.request.String(),
			fmt.Sprintf("must be less than or equal to the memory limit %s", m.limit.String())))
	}
	if positive(m.limit) && m.guest != nil && m.guest.Cmp(*m.limit) > 0 {
		errs = append(errs, field.Invalid(guestPath, m.guest.String(),
			fmt.Sprintf("must be less than or equal to the memory limit %s", m.limit.String())))
	}
	return errs
}

// negative reports whether any of qs is given and negative.
func negative(qs ...*resource.Quantity) bool {
	for _, q := range qs {
		if q != nil && q.Sign() < 0 {
			return true
		}
	}
	return false
}

// validateMemoryQuantity checks that a memory amount is not negative and at least MinGuestMemory
// bytes; zeroAllowed accepts exactly 0 too (a memory request of 0 means "none").
func validateMemoryQuantity(q resource.Quantity, fldPath *field.Path, zeroAllowed bool) field.ErrorList {
	switch {
	case q.Sign() < 0:
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must not be negative")}
	case q.IsZero() && zeroAllowed:
		return nil
	case q.Value() < MinGuestMemory:
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be at least 1M (1000000 bytes)")}
	}
	return nil
}

// validateSecureBootNeedsSMM refuses EFI secure boot, which is on unless efi.secureBoot is false,
// without the SMM feature, as KubeVirt does: the secure-boot firmware only works with SMM.
func validateSecureBootNeedsSMM(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	fw := domain.Firmware
	if fw == nil || fw.Bootloader == nil || fw.Bootloader.EFI == nil {
		return nil
	}
	if sb := fw.Bootloader.EFI.SecureBoot; sb != nil && !*sb {
		return nil
	}
	if f := domain.Features; f != nil && f.SMM != nil && enabled(f.SMM.Enabled) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("firmware", "bootloader", "efi", "secureBoot"), true,
		"EFI secure boot (the default with efi) needs System Management Mode: set spec.domain.features.smm: {}, "+
			"or set efi.secureBoot: false")}
}

// enabled reads an optional "enabled" flag that defaults to true.
func enabled(b *bool) bool { return b == nil || *b }
