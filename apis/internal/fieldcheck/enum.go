// Package fieldcheck holds the field checks that the validation of both API groups shares, so
// each rule and its error exist once.
package fieldcheck

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Enum reports a NotSupported error at fldPath, listing the allowed values, when value is not one
// of allowed. An empty value is not allowed either: use it for fields that must be set.
func Enum[T ~string](value T, allowed []T, fldPath *field.Path) field.ErrorList {
	if slices.Contains(allowed, value) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, value, allowed)}
}

// OptionalEnum is Enum for a field that may be left empty (the server or the node picks then).
func OptionalEnum[T ~string](value T, allowed []T, fldPath *field.Path) field.ErrorList {
	if value == "" {
		return nil
	}
	return Enum(value, allowed, fldPath)
}
