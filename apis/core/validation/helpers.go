package validation

import (
	"path/filepath"
	"reflect"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateDNS1123Label reports an error at fldPath when value is not a DNS-1123 label.
func validateDNS1123Label(value string, fldPath *field.Path) field.ErrorList {
	return messagesToError(validation.IsDNS1123Label(value), value, fldPath)
}

// validateDNS1123Subdomain reports an error at fldPath when value is not a DNS-1123 subdomain.
func validateDNS1123Subdomain(value string, fldPath *field.Path) field.ErrorList {
	return messagesToError(validation.IsDNS1123Subdomain(value), value, fldPath)
}

// messagesToError turns the messages of an apimachinery format check of value into at most one
// Invalid error at fldPath.
func messagesToError(msgs []string, value string, fldPath *field.Path) field.ErrorList {
	if len(msgs) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, value, strings.Join(msgs, "; "))}
}

// validateObjectName checks a required name that must be a DNS-1123 subdomain, such as the name
// of an object referred to.
func validateObjectName(name string, fldPath *field.Path, what string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "the name of the "+what+" is required")}
	}
	return validateDNS1123Subdomain(name, fldPath)
}

// validateNonNegativeQuantity reports an error when q is negative.
func validateNonNegativeQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must not be negative")}
	}
	return nil
}

// immutableSpecError returns the error for a spec that changed although it may not: it names the
// first top-level field of the spec that differs, so the user sees what they touched.
func immutableSpecError(newSpec, oldSpec any, fldPath *field.Path, what string) *field.Error {
	detail := "spec is immutable after creation"
	if p := firstDifference(reflect.ValueOf(newSpec), reflect.ValueOf(oldSpec), fldPath); p != nil {
		detail += " (" + p.String() + " was changed)"
	}
	return field.Forbidden(fldPath, detail+"; "+what)
}

// firstDifference returns the path of the first field of the structs newV and oldV whose values
// differ semantically, descending into inline (embedded) structs, or nil when none differs.
func firstDifference(newV, oldV reflect.Value, fldPath *field.Path) *field.Path {
	for newV.Kind() == reflect.Pointer {
		if newV.IsNil() || oldV.IsNil() {
			return nil
		}
		newV, oldV = newV.Elem(), oldV.Elem()
	}
	if newV.Kind() != reflect.Struct || newV.Type() != oldV.Type() {
		return nil
	}
	t := newV.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		a, b := newV.Field(i), oldV.Field(i)
		if apiequality.Semantic.DeepEqual(a.Interface(), b.Interface()) {
			continue
		}
		if name == "" {
			if p := firstDifference(a, b, fldPath); p != nil {
				return p
			}
			return fldPath
		}
		return fldPath.Child(name)
	}
	return nil
}

// validateImagePath checks a path to a file inside a container image as KubeVirt does: absolute,
// not the root, and already clean (no "." or ".." components, no doubled slashes).
func validateImagePath(p string, fldPath *field.Path) field.ErrorList {
	if p == "/" {
		return field.ErrorList{field.Invalid(fldPath, p, "must name a file, not the root directory")}
	}
	if filepath.Join("/", p) != strings.TrimSuffix(p, "/") {
		return field.ErrorList{field.Invalid(fldPath, p,
			`must be an absolute path without "." or ".." components, such as /disk/disk.qcow2`)}
	}
	return nil
}
