package datavolume

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// sourceReaders allows create on datavolumes/source to alice in namespace "src" only.
type sourceReaders struct{ asked []authorizer.Attributes }

func (s *sourceReaders) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	s.asked = append(s.asked, a)
	if a.GetUser().GetName() == "alice" && a.GetNamespace() == "src" && a.GetVerb() == "create" &&
		a.GetAPIGroup() == cdiv1beta1.GroupName && a.GetResource() == "datavolumes" && a.GetSubresource() == "source" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestCloneSources(t *testing.T) {
	authz := &sourceReaders{}
	c := CloneSources{Authorizer: authorizer.AuthorizerFunc(authz.Authorize)}
	clone := func(ns string) *cdiv1beta1.DataVolumeSpec {
		return &cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: ns, Name: "disk"}}}
	}
	as := func(name string) context.Context {
		return genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: name})
	}
	path := field.NewPath("spec")
	if errs := c.Check(as("alice"), "dst", clone("src"), path); len(errs) != 0 {
		t.Errorf("alice may read src: %v", errs)
	}
	errs := c.Check(as("bob"), "dst", clone("src"), path)
	if len(errs) != 1 || errs[0].Field != "spec.source.pvc.namespace" || !strings.Contains(errs[0].Detail, `user "bob" may not clone claims of namespace "src"`) {
		t.Errorf("bob may not read src: %v", errs)
	}
	authz.asked = nil
	for _, tc := range []struct {
		name string
		ctx  context.Context
		spec *cdiv1beta1.DataVolumeSpec
	}{
		{"same namespace", as("bob"), clone("dst")},
		{"namespace left out", as("bob"), clone("")},
		{"not a clone", as("bob"), &cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}}}},
		{"the controller, for a VM's template", as(v1.ControllerUser), clone("src")},
	} {
		if errs := c.Check(tc.ctx, "dst", tc.spec, path); len(errs) != 0 {
			t.Errorf("%s: %v", tc.name, errs)
		}
	}
	if len(authz.asked) != 0 {
		t.Errorf("asked the authorizer about what needs no question: %v", authz.asked)
	}
}
