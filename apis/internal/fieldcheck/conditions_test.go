package fieldcheck

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestConditions(t *testing.T) {
	type cond struct{ t, s string }
	get := func(c cond) (string, string) { return c.t, c.s }
	path := field.NewPath("status", "conditions")
	cases := []struct {
		name  string
		conds []cond
		want  []string // "type:field" of each error
	}{
		{"none", nil, nil},
		{"well-formed", []cond{{"Ready", "True"}, {"Paused", "False"}, {"Synchronized", "Unknown"}}, nil},
		{"missing type", []cond{{"", "True"}}, []string{"FieldValueRequired:status.conditions[0].type"}},
		{"bad status", []cond{{"Ready", "yes"}}, []string{"FieldValueNotSupported:status.conditions[0].status"}},
		{"duplicate type", []cond{{"Ready", "True"}, {"Ready", "False"}}, []string{"FieldValueDuplicate:status.conditions[1].type"}},
	}
	for _, c := range cases {
		var got []string
		for _, e := range Conditions(c.conds, get, path) {
			got = append(got, string(e.Type)+":"+e.Field)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: errors %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: errors %v, want %v", c.name, got, c.want)
			}
		}
	}
}
