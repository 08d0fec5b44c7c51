package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ReservedLabels are the labels that Vireo's components set on kubevirt.io objects to track them
// (which controller created a VMI, which node runs it, which migration moves it, whether a node can
// take VMIs, which install strategy deployed something). Users may not add, change or remove them.
var ReservedLabels = []string{
	v1.CreatedByLabel,
	v1.NodeNameLabel,
	v1.MigrationJobLabel,
	v1.MigrationTargetNodeNameLabel,
	v1.NodeSchedulable,
	v1.InstallStrategyLabel,
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
