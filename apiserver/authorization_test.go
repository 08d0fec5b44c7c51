package apiserver

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// rbacLike allows everything on names in allowed ("" meaning every name) and counts questions.
type rbacLike struct {
	allowed map[string]bool
	asked   []string
}

func (r *rbacLike) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r.asked = append(r.asked, a.GetName())
	if r.allowed[a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (r *rbacLike) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(r.Authorize(ctx, a))
}

func (r *rbacLike) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func get(name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice"}, Verb: "get", Namespace: "ns",
		APIGroup: "kubevirt.io", Resource: "virtualmachineinstances", Name: name, ResourceRequest: true}
}

func TestAnyNameFirstKeepsDecisions(t *testing.T) {
	cases := []struct {
		name      string
		allowed   map[string]bool
		request   authorizer.AttributesRecord
		want      authorizer.Decision
		wantAsked []string
	}{
		{"allowed on all names: one name-less question", map[string]bool{"": true}, get("vm-1"), authorizer.DecisionAllow, []string{""}},
		{"allowed on this name only (resourceNames)", map[string]bool{"vm-1": true}, get("vm-1"), authorizer.DecisionAllow, []string{"", "vm-1"}},
		{"allowed on another name only", map[string]bool{"vm-2": true}, get("vm-1"), authorizer.DecisionNoOpinion, []string{"", "vm-1"}},
		{"list has no name: asked once as is", map[string]bool{}, get(""), authorizer.DecisionNoOpinion, []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := &rbacLike{allowed: c.allowed}
			w := withAnyNameFirst(inner)
			d, _, err := w.Authorize(context.Background(), c.request)
			if err != nil || d != c.want {
				t.Errorf("decision %v (err %v), want %v", d, err, c.want)
			}
			if len(inner.asked) != len(c.wantAsked) {
				t.Fatalf("asked %q, want %q", inner.asked, c.wantAsked)
			}
			for i := range inner.asked {
				if inner.asked[i] != c.wantAsked[i] {
					t.Errorf("asked %q, want %q", inner.asked, c.wantAsked)
				}
			}
			cd := w.ConditionsAwareAuthorize(context.Background(), c.request)
			if cd.IsAllow() != (c.want == authorizer.DecisionAllow) {
				t.Errorf("conditions-aware decision %v, want %v", cd, c.want)
			}
		})
	}
}
