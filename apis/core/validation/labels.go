package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ReservedLabels are the labels that Vireo's components set on kubevirt.io objects to track them
// (which controller created a VMI, which node runs it, which migration moves it, whether a node can
// take VMIs, which install strategy deployed something). Users may not add, change or remove them.
var ReservedLabels = []string{
	"kubevirt.io/created-by",
	"kubevirt.io/nodeName",
	"kubevirt.io/migrationJobUID",
	"kubevirt.io/migrationTargetNodeName",
	"kubevirt.io/schedulable",
	"kubevirt.io/install-strategy",
}

// ValidateReservedLabels reports every reserved label that labels adds, changes or removes
// compared to oldLabels (nil on create). Errors are at fldPath.Key(label).
func ValidateReservedLabels(labels, oldLabels map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range ReservedLabels {
		value, has := labels[key]
		oldValue, had := oldLabels[key]
		var what string
		switch {
		case has && !had:
			what = "added"
		case !has && had:
			what = "removed"
		case has && value != oldValue:
			what = "changed"
		default:
			continue
		}
		errs = append(errs, field.Forbidden(fldPath.Key(key),
			"label "+key+" is reserved for Vireo's components and cannot be "+what+" by users"))
	}
	return errs
}
