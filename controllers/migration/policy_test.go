package migration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
)

func policy(name string, vmi, ns v1alpha1.LabelSelector) *v1alpha1.MigrationPolicy {
	return &v1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.MigrationPolicySpec{Selectors: &v1alpha1.Selectors{VirtualMachineInstanceSelector: vmi, NamespaceSelector: ns}}}
}

// TestMatchPolicy: KubeVirt's precedence (most matching labels, then most VMI labels, then the
// first name), and every label of a selector must be present.
func TestMatchPolicy(t *testing.T) {
	all := []*v1alpha1.MigrationPolicy{
		policy("everything", nil, nil),
		policy("ns-two", nil, v1alpha1.LabelSelector{"team": "a", "env": "prod"}),
		policy("vmi-one-ns-one", v1alpha1.LabelSelector{"tier": "db"}, v1alpha1.LabelSelector{"team": "a"}),
		policy("b-vmi-two", v1alpha1.LabelSelector{"tier": "db", "size": "big"}, nil),
		policy("a-vmi-two", v1alpha1.LabelSelector{"tier": "db", "size": "big"}, nil),
		policy("needs-gpu", v1alpha1.LabelSelector{"gpu": "yes"}, nil),
		{ObjectMeta: metav1.ObjectMeta{Name: "no-selectors"}},
	}
	cases := []struct {
		name       string
		vmi, ns    map[string]string
		want       string
		candidates []*v1alpha1.MigrationPolicy
	}{
		{"nothing but the catch-all", nil, nil, "everything", all},
		{"two labels: VMI labels win the tie, then the first name", map[string]string{"tier": "db", "size": "big"},
			map[string]string{"team": "a", "env": "prod"}, "a-vmi-two", all},
		{"namespace labels count", map[string]string{"tier": "db"}, map[string]string{"team": "a", "env": "prod"}, "ns-two",
			all[:2]},
		{"a tie of two labels goes to the policy with more VMI labels", map[string]string{"tier": "db"},
			map[string]string{"team": "a", "env": "prod"}, "vmi-one-ns-one", all[:3]},
		{"a VMI without labels does not match a VMI selector", nil, map[string]string{"team": "a"}, "",
			[]*v1alpha1.MigrationPolicy{all[2], all[5]}},
		{"a policy without selectors matches nothing", map[string]string{"tier": "db"}, nil, "", all[6:]},
	}
	for _, c := range cases {
		got := matchPolicy(c.candidates, c.vmi, c.ns)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%s: %q, want %q", c.name, name, c.want)
		}
	}
}
