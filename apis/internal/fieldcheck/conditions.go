package fieldcheck

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// conditionStatuses are the values a condition's status may have, in every kind.
var conditionStatuses = []string{"True", "False", "Unknown"}

// Conditions checks the conditions of any kind, given how to read one's type and status: each
// has a type and a True, False or Unknown status, and no type appears twice (server-side apply
// keys conditions by type, so a second one of a type could never be applied or removed).
func Conditions[C any](conds []C, typeAndStatus func(C) (string, string), fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range conds {
		cPath := fldPath.Index(i)
		condType, status := typeAndStatus(c)
		switch {
		case condType == "":
			errs = append(errs, field.Required(cPath.Child("type"), "every condition needs a type, such as Ready"))
		case seen[condType]:
			errs = append(errs, field.Duplicate(cPath.Child("type"), condType))
		}
		seen[condType] = true
		errs = append(errs, Enum(status, conditionStatuses, cPath.Child("status"))...)
	}
	return errs
}
