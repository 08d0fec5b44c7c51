package apiserver

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// anyNameFirst asks whether the user may act on every object of the resource before
// asking about the one named in the request. Delegated authorization sends a
// SubjectAccessReview to kube-apiserver and caches the answer per exact request, so
// reading 1000 different VMIs meant 1000 reviews; the name-less question is the same
// for all of them and stays cached. It changes no decision: a review without a name
// means "all names", so allowing it implies allowing any one name, and when it is not
// allowed (denied, no opinion, or an error) the named question is asked as before and
// decides alone (rules with resourceNames still work).
type anyNameFirst struct {
	inner authorizer.Authorizer
}

// withAnyNameFirst wraps an authorizer; nil stays nil.
func withAnyNameFirst(a authorizer.Authorizer) authorizer.Authorizer {
	if a == nil {
		return nil
	}
	return anyNameFirst{inner: a}
}

// Authorize allows a named resource request when the user may act on all names.
func (w anyNameFirst) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if wide, ok := withoutName(a); ok {
		if d, reason, err := w.inner.Authorize(ctx, wide); d == authorizer.DecisionAllow && err == nil {
			return d, reason, nil
		}
	}
	return w.inner.Authorize(ctx, a)
}

// ConditionsAwareAuthorize allows unconditionally when all names are allowed, and
// otherwise defers to the wrapped authorizer.
func (w anyNameFirst) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	if wide, ok := withoutName(a); ok {
		if d, reason, err := w.inner.Authorize(ctx, wide); d == authorizer.DecisionAllow && err == nil {
			return authorizer.ConditionsAwareDecisionFromParts(d, reason, nil)
		}
	}
	return w.inner.ConditionsAwareAuthorize(ctx, a)
}

// EvaluateConditions is the wrapped authorizer's.
func (w anyNameFirst) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return w.inner.EvaluateConditions(ctx, d, data)
}

// withoutName returns a's attributes with the object name cleared, for named resource requests.
func withoutName(a authorizer.Attributes) (authorizer.Attributes, bool) {
	if !a.IsResourceRequest() || a.GetName() == "" {
		return nil, false
	}
	fieldReqs, fieldErr := a.GetFieldSelector()
	labelReqs, labelErr := a.GetLabelSelector()
	return authorizer.AttributesRecord{
		User:                      a.GetUser(),
		Verb:                      a.GetVerb(),
		Namespace:                 a.GetNamespace(),
		APIGroup:                  a.GetAPIGroup(),
		APIVersion:                a.GetAPIVersion(),
		Resource:                  a.GetResource(),
		Subresource:               a.GetSubresource(),
		ResourceRequest:           true,
		Path:                      a.GetPath(),
		FieldSelectorRequirements: fieldReqs,
		FieldSelectorParsingErr:   fieldErr,
		LabelSelectorRequirements: labelReqs,
		LabelSelectorParsingErr:   labelErr,
	}, true
}
