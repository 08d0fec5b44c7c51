package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ValidateVirtualMachineInstanceReplicaSet validates a new replica set: its metadata, a replica
// count that is not negative, a selector that matches its template's labels, and the template as
// a VMI template (the VMIs made from it are defaulted and validated again when created).
func ValidateVirtualMachineInstanceReplicaSet(rs *v1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineInstanceReplicaSetUpdate validates an update of a replica set; its spec
// may change (kubectl scale, a new template for VMIs created from now on).
func ValidateVirtualMachineInstanceReplicaSetUpdate(rs, old *v1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func validateReplicaSetSpec(spec *v1.VirtualMachineInstanceReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r := spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("replicas"), *r, "must be 0 or more"))
	}
	tPath := fldPath.Child("template")
	if spec.Template == nil {
		return append(errs, field.Required(tPath, "a replica set needs a template for the VirtualMachineInstances it creates"))
	}
	errs = append(errs, validateTemplate(spec.Template, tPath, false)...)
	return append(errs, ValidateSelector(spec.Selector, spec.Template.ObjectMeta.Labels, fldPath.Child("selector"))...)
}

// validateTemplate checks a VMI template's labels, annotations and spec; sized says an
// instancetype gives the guest its memory.
func validateTemplate(t *v1.VirtualMachineInstanceTemplateSpec, tPath *field.Path, sized bool) field.ErrorList {
	mPath := tPath.Child("metadata")
	errs := metav1validation.ValidateLabels(t.ObjectMeta.Labels, mPath.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.ObjectMeta.Annotations, mPath.Child("annotations"))...)
	return append(errs, validateSpec(&t.Spec, tPath.Child("spec"), specOptions{template: true, sized: sized})...)
}

// ValidateSelector checks that a controller's selector (a replica set's, a pool's) is set, not
// empty, valid and matches the labels of the objects it creates from its template (or it would
// create them forever).
func ValidateSelector(sel *metav1.LabelSelector, templateLabels map[string]string, fldPath *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(fldPath, "a selector is needed to find the objects made from the template")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)
	if len(errs) > 0 {
		return errs
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, sel, err.Error())}
	}
	if selector.Empty() {
		return field.ErrorList{field.Invalid(fldPath, sel, "an empty selector would select every object of the namespace")}
	}
	if !selector.Matches(labels.Set(templateLabels)) {
		return field.ErrorList{field.Invalid(fldPath, selector.String(), "selector does not match the labels of template.metadata.labels")}
	}
	return nil
}
