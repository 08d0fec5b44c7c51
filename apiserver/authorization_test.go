package apiserver

import (
	"context"
	"errors"
	"strings"
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

// answer is a scripted reply of the wrapped authorizer.
type answer struct {
	decision authorizer.Decision
	err      error
}

// scripted answers the wide (name-less) question and the named one as told, and records
// the names it was asked about.
type scripted struct {
	wide, named answer
	asked       []string
}

func (s *scripted) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	s.asked = append(s.asked, a.GetName())
	if a.GetName() == "" {
		return s.wide.decision, "wide", s.wide.err
	}
	return s.named.decision, "named", s.named.err
}

func (s *scripted) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(s.Authorize(ctx, a))
}

func (s *scripted) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// TestAnyNameFirstAsksAboutTheNamedObjectWhenAllNamesAreDenied covers an authorizer that
// says Deny (not just "no opinion") or fails on the wide question: the decision is the
// named question's, never the wide one's.
func TestAnyNameFirstAsksAboutTheNamedObjectWhenAllNamesAreDenied(t *testing.T) {
	failed := errors.New("SubjectAccessReview failed")
	allow, deny := answer{decision: authorizer.DecisionAllow}, answer{decision: authorizer.DecisionDeny}
	cases := []struct {
		name        string
		wide, named answer
		want        authorizer.Decision
		wantErr     bool
		wantAsked   []string
	}{
		{"all names denied, this name allowed", deny, allow, authorizer.DecisionAllow, false, []string{"", "vm-1"}},
		{"all names denied, this name denied", deny, deny, authorizer.DecisionDeny, false, []string{"", "vm-1"}},
		{"all names: error, this name allowed", answer{authorizer.DecisionNoOpinion, failed}, allow, authorizer.DecisionAllow, false, []string{"", "vm-1"}},
		{"error on both questions", answer{authorizer.DecisionNoOpinion, failed}, answer{authorizer.DecisionNoOpinion, failed}, authorizer.DecisionNoOpinion, true, []string{"", "vm-1"}},
		{"all names allowed along with an error", answer{authorizer.DecisionAllow, failed}, deny, authorizer.DecisionDeny, false, []string{"", "vm-1"}},
		{"all names allowed", allow, deny, authorizer.DecisionAllow, false, []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := &scripted{wide: c.wide, named: c.named}
			w := withAnyNameFirst(inner)
			d, reason, err := w.Authorize(context.Background(), get("vm-1"))
			if d != c.want || (err != nil) != c.wantErr {
				t.Errorf("Authorize: %v, %q, %v; want %v with error %v", d, reason, err, c.want, c.wantErr)
			}
			if c.wantErr && !errors.Is(err, failed) {
				t.Errorf("Authorize error %v, want the wrapped authorizer's", err)
			}
			if strings.Join(inner.asked, ",") != strings.Join(c.wantAsked, ",") {
				t.Errorf("Authorize asked about %q, want %q", inner.asked, c.wantAsked)
			}

			inner.asked = nil
			cd := w.ConditionsAwareAuthorize(context.Background(), get("vm-1"))
			if cd.IsAllow() != (c.want == authorizer.DecisionAllow) || cd.IsDeny() != (c.want == authorizer.DecisionDeny) {
				t.Errorf("ConditionsAwareAuthorize: %v, want %v", cd, c.want)
			}
			if strings.Join(inner.asked, ",") != strings.Join(c.wantAsked, ",") {
				t.Errorf("ConditionsAwareAuthorize asked about %q, want %q", inner.asked, c.wantAsked)
			}
		})
	}
}
