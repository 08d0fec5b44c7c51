// Package validation checks instancetypes and preferences, with field paths in every error.
package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

var (
	topologies = []v1beta1.PreferredCPUTopology{v1beta1.PreferSockets, v1beta1.PreferCores, v1beta1.PreferThreads, v1beta1.PreferSpread,
		v1beta1.PreferAny, v1beta1.DeprecatedPreferSockets, v1beta1.DeprecatedPreferCores, v1beta1.DeprecatedPreferThreads,
		v1beta1.DeprecatedPreferSpread, v1beta1.DeprecatedPreferAny}
	spreads = []v1beta1.SpreadAcross{v1beta1.SpreadAcrossSocketsCoresThreads, v1beta1.SpreadAcrossSocketsCores, v1beta1.SpreadAcrossCoresThreads}
)

// ValidateInstancetype validates an instancetype (namespaced when namespaced is set) and, on an
// update, its metadata against old's.
func ValidateInstancetype(meta, old *metav1.ObjectMeta, namespaced bool, spec *v1beta1.VirtualMachineInstancetypeSpec) field.ErrorList {
	errs := validateMeta(meta, old, namespaced)
	path := field.NewPath("spec")
	if spec.CPU.Guest < 1 {
		errs = append(errs, field.Required(path.Child("cpu", "guest"), "an instancetype needs at least one vCPU"))
	}
	if s := spec.CPU.MaxSockets; s != nil && *s < 1 {
		errs = append(errs, field.Invalid(path.Child("cpu", "maxSockets"), *s, "must be 1 or more"))
	}
	mem := spec.Memory
	if mem.Guest.Sign() <= 0 {
		errs = append(errs, field.Required(path.Child("memory", "guest"), "an instancetype needs guest memory, such as 2Gi"))
	}
	if p := mem.OvercommitPercent; p < 0 || p > 100 {
		errs = append(errs, field.Invalid(path.Child("memory", "overcommitPercent"), p, "must be between 0 and 100"))
	}
	if m := mem.MaxGuest; m != nil && m.Cmp(mem.Guest) < 0 {
		errs = append(errs, field.Invalid(path.Child("memory", "maxGuest"), m.String(), "must not be less than memory.guest "+mem.Guest.String()))
	}
	return errs
}

// ValidatePreference validates a preference like ValidateInstancetype.
func ValidatePreference(meta, old *metav1.ObjectMeta, namespaced bool, spec *v1beta1.VirtualMachinePreferenceSpec) field.ErrorList {
	errs := validateMeta(meta, old, namespaced)
	path := field.NewPath("spec")
	if c := spec.CPU; c != nil {
		if c.PreferredCPUTopology != nil {
			errs = append(errs, fieldcheck.Enum(*c.PreferredCPUTopology, topologies, path.Child("cpu", "preferredCPUTopology"))...)
		}
		if o := c.SpreadOptions; o != nil {
			if o.Across != nil {
				errs = append(errs, fieldcheck.Enum(*o.Across, spreads, path.Child("cpu", "spreadOptions", "across"))...)
			}
			if o.Ratio != nil && *o.Ratio < 1 {
				errs = append(errs, field.Invalid(path.Child("cpu", "spreadOptions", "ratio"), *o.Ratio, "must be 1 or more"))
			}
		}
	}
	if r := spec.Requirements; r != nil {
		if r.CPU != nil && r.CPU.Guest < 1 {
			errs = append(errs, field.Invalid(path.Child("requirements", "cpu", "guest"), r.CPU.Guest, "must be 1 or more"))
		}
		if r.Memory != nil && r.Memory.Guest.Sign() <= 0 {
			errs = append(errs, field.Invalid(path.Child("requirements", "memory", "guest"), r.Memory.Guest.String(), "must be more than 0"))
		}
	}
	return errs
}

func validateMeta(meta, old *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	if old != nil {
		return apivalidation.ValidateObjectMetaUpdate(meta, old, field.NewPath("metadata"))
	}
	return apivalidation.ValidateObjectMeta(meta, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}
