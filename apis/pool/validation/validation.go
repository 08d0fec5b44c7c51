// Package validation checks VirtualMachinePools as KubeVirt's admission does, with field paths in
// every error, and refuses what Vireo cannot do yet (state preservation, node matchers).
package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	corevalidation "github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

var sortPolicies = []v1beta1.VirtualMachinePoolSortPolicy{v1beta1.SortAscendingOrder, v1beta1.SortDescendingOrder,
	v1beta1.SortNewest, v1beta1.SortOldest, v1beta1.SortRandom}

// ValidateVirtualMachinePool validates a new pool.
func ValidateVirtualMachinePool(p *v1beta1.VirtualMachinePool) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(p, field.NewPath("spec"))...)
}

// ValidateVirtualMachinePoolUpdate validates an update of a pool; its spec may change.
func ValidateVirtualMachinePoolUpdate(p, old *v1beta1.VirtualMachinePool) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(p, field.NewPath("spec"))...)
}

func validateSpec(p *v1beta1.VirtualMachinePool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	spec := &p.Spec
	if r := spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), *r, "must be 0 or more"))
	}
	tPath := path.Child("virtualMachineTemplate")
	if spec.VirtualMachineTemplate == nil {
		return append(errs, field.Required(tPath, "a pool needs a template for the VirtualMachines it creates"))
	}
	t := spec.VirtualMachineTemplate
	mPath := tPath.Child("metadata")
	errs = append(errs, metav1validation.ValidateLabels(t.ObjectMeta.Labels, mPath.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(t.ObjectMeta.Annotations, mPath.Child("annotations"))...)
	vm := &corev1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace}, Spec: t.Spec}
	errs = append(errs, corevalidation.ValidateVirtualMachineSpec(vm, tPath.Child("spec"))...)
	errs = append(errs, corevalidation.ValidateSelector(spec.Selector, t.ObjectMeta.Labels, path.Child("selector"))...)
	errs = append(errs, validateMaxUnavailable(spec.MaxUnavailable, path.Child("maxUnavailable"))...)
	errs = append(errs, validateScaleIn(spec.ScaleInStrategy, path.Child("scaleInStrategy"))...)
	errs = append(errs, validateUpdate(spec.UpdateStrategy, path.Child("updateStrategy"))...)
	if a := spec.Autohealing; a != nil {
		aPath := path.Child("autohealing")
		if n := a.StartUpFailureThreshold; n != nil && *n < 1 {
			errs = append(errs, field.Invalid(aPath.Child("startUpFailureThreshold"), *n, "must be 1 or more"))
		}
		if d := a.MinFailingToStartDuration; d != nil && d.Duration < 0 {
			errs = append(errs, field.Invalid(aPath.Child("minFailingToStartDuration"), d.String(), "must not be negative"))
		}
	}
	return errs
}

func validateMaxUnavailable(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if _, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true); err != nil {
		return field.ErrorList{field.Invalid(path, v.String(), "must be a number or a percentage such as 25%")}
	}
	if v.Type == intstr.Int && v.IntVal < 0 {
		return field.ErrorList{field.Invalid(path, v.IntVal, "must not be negative")}
	}
	return nil
}

func validateScaleIn(s *v1beta1.VirtualMachinePoolScaleInStrategy, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := oneOf(path, map[string]bool{"unmanaged": s.Unmanaged != nil, "opportunistic": s.Opportunistic != nil, "proactive": s.Proactive != nil})
	if o := s.Opportunistic; o != nil {
		errs = append(errs, validateStatePreservation(o.StatePreservation, path.Child("opportunistic", "statePreservation"))...)
	}
	if p := s.Proactive; p != nil {
		errs = append(errs, validateStatePreservation(p.StatePreservation, path.Child("proactive", "statePreservation"))...)
		errs = append(errs, validateSelection(p.SelectionPolicy, path.Child("proactive", "selectionPolicy"))...)
	}
	return errs
}

func validateUpdate(s *v1beta1.VirtualMachinePoolUpdateStrategy, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := oneOf(path, map[string]bool{"unmanaged": s.Unmanaged != nil, "opportunistic": s.Opportunistic != nil, "proactive": s.Proactive != nil})
	if p := s.Proactive; p != nil {
		errs = append(errs, validateSelection(p.SelectionPolicy, path.Child("proactive", "selectionPolicy"))...)
	}
	return errs
}

// oneOf refuses a strategy that sets more than one of its members.
func oneOf(path *field.Path, set map[string]bool) field.ErrorList {
	var names []string
	for _, name := range []string{"unmanaged", "opportunistic", "proactive"} {
		if set[name] {
			names = append(names, name)
		}
	}
	if len(names) > 1 {
		return field.ErrorList{field.Invalid(path, names, "set only one of unmanaged, opportunistic and proactive")}
	}
	return nil
}

func validateStatePreservation(s *v1beta1.StatePreservation, path *field.Path) field.ErrorList {
	if s == nil || *s == v1beta1.StatePreservationDisabled {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, "Vireo does not preserve the state of VMs removed from a pool yet: only Disabled is supported, not "+string(*s))}
}

func validateSelection(p *v1beta1.VirtualMachinePoolSelectionPolicy, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if p.SortPolicy != nil {
		errs = append(errs, fieldcheck.Enum(*p.SortPolicy, sortPolicies, path.Child("sortPolicy"))...)
	}
	if s := p.Selectors; s != nil {
		if s.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(s.LabelSelector, metav1validation.LabelSelectorValidationOptions{},
				path.Child("selectors", "labelSelector"))...)
		}
		if len(s.NodeSelectorRequirementMatcher) > 0 {
			errs = append(errs, field.Forbidden(path.Child("selectors", "nodeSelectorRequirementMatcher"),
				"Vireo does not select a pool's VMs by their nodes yet"))
		}
	}
	return errs
}
