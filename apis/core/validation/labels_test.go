package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateReservedLabels(t *testing.T) {
	const node = "metadata.labels[kubevirt.io/nodeName]"
	cases := []struct {
		name     string
		labels   map[string]string
		old      map[string]string
		want     []fe
		wantVerb string
	}{
		{name: "create without reserved labels", labels: map[string]string{"app": "web", "kubevirt.io/vm": "vm1"}},
		{name: "create with nil labels"},
		{name: "create with nodeName", labels: map[string]string{"kubevirt.io/nodeName": "n1"}, want: []fe{{forbidden, node}}, wantVerb: "added"},
		{name: "create with all reserved", labels: map[string]string{
			"kubevirt.io/created-by": "x", "kubevirt.io/nodeName": "x", "kubevirt.io/migrationJobUID": "x",
			"kubevirt.io/migrationTargetNodeName": "x", "kubevirt.io/schedulable": "x", "kubevirt.io/install-strategy": "x",
		}, want: []fe{
			{forbidden, "metadata.labels[kubevirt.io/created-by]"},
			{forbidden, node},
			{forbidden, "metadata.labels[kubevirt.io/migrationJobUID]"},
			{forbidden, "metadata.labels[kubevirt.io/migrationTargetNodeName]"},
			{forbidden, "metadata.labels[kubevirt.io/schedulable]"},
			{forbidden, "metadata.labels[kubevirt.io/install-strategy]"},
		}},
		{name: "update keeps reserved", labels: map[string]string{"kubevirt.io/nodeName": "n1", "app": "b"},
			old: map[string]string{"kubevirt.io/nodeName": "n1", "app": "a"}},
		{name: "update changes reserved", labels: map[string]string{"kubevirt.io/nodeName": "n2"},
			old: map[string]string{"kubevirt.io/nodeName": "n1"}, want: []fe{{forbidden, node}}, wantVerb: "changed"},
		{name: "update removes reserved", labels: map[string]string{},
			old: map[string]string{"kubevirt.io/nodeName": "n1"}, want: []fe{{forbidden, node}}, wantVerb: "removed"},
		{name: "update adds reserved", labels: map[string]string{"kubevirt.io/nodeName": "n1"},
			old: map[string]string{}, want: []fe{{forbidden, node}}, wantVerb: "added"},
		{name: "empty value counts as set", labels: map[string]string{"kubevirt.io/schedulable": ""},
			want: []fe{{forbidden, "metadata.labels[kubevirt.io/schedulable]"}}, wantVerb: "added"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateReservedLabels(tc.labels, tc.old, field.NewPath("metadata", "labels"))
			expectErrors(t, errs, tc.want...)
			if tc.wantVerb != "" && len(errs) == 1 && !strings.Contains(errs[0].Detail, tc.wantVerb) {
				t.Errorf("message %q does not say %q", errs[0].Detail, tc.wantVerb)
			}
		})
	}
}
