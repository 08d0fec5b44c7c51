package fieldcheck

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestEnum(t *testing.T) {
	allowed := []string{"a", "b"}
	path := field.NewPath("spec", "x")
	cases := []struct {
		value              string
		required, optional int
	}{
		{"a", 0, 0},
		{"b", 0, 0},
		{"", 1, 0},
		{"c", 1, 1},
	}
	for _, c := range cases {
		if errs := Enum(c.value, allowed, path); len(errs) != c.required {
			t.Errorf("Enum(%q) = %v, want %d errors", c.value, errs, c.required)
		} else if len(errs) == 1 && (errs[0].Type != field.ErrorTypeNotSupported || errs[0].Field != "spec.x") {
			t.Errorf("Enum(%q) = %v, want NotSupported at spec.x", c.value, errs)
		}
		if errs := OptionalEnum(c.value, allowed, path); len(errs) != c.optional {
			t.Errorf("OptionalEnum(%q) = %v, want %d errors", c.value, errs, c.optional)
		}
	}
}
