package vmistream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// ScreenshotSubresource is the screenshot's subresource for RBAC. The request parser sees
// only "vnc" in .../vnc/screenshot, so the server's filters authorized get on
// virtualmachineinstances/vnc; Screenshot checks this one itself (KubeVirt grants it to admin
// only, not to edit).
const ScreenshotSubresource = "vnc/screenshot"

// Screenshot serves GET .../virtualmachineinstances/{name}/vnc/screenshot: a PNG of the VMI's
// display, taken by its node agent (moveCursor=true moves the pointer first, waking a blank
// screen).
type Screenshot struct {
	vmis   Getter
	agents *agentclient.Client
	authz  authorizer.Authorizer
}

// NewScreenshot returns the screenshot handler of the VMIs in vmis.
func NewScreenshot(vmis Getter, agents *agentclient.Client, authz authorizer.Authorizer) *Screenshot {
	return &Screenshot{vmis: vmis, agents: agents, authz: authz}
}

// Handler checks the user's permission and the VMI, and returns the proxy to its node agent;
// group is the API group the request came through (kubevirt.io or subresources.kubevirt.io).
func (s *Screenshot) Handler(ctx context.Context, group, namespace, name string, query url.Values) (http.Handler, error) {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user")
	}
	gr := schema.GroupResource{Group: group, Resource: "virtualmachineinstances/" + ScreenshotSubresource}
	decision, reason, err := s.authz.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: "get", APIGroup: group, APIVersion: "v1", Namespace: namespace,
		Resource: "virtualmachineinstances", Subresource: ScreenshotSubresource, Name: name, ResourceRequest: true,
	})
	if decision != authorizer.DecisionAllow {
		msg := fmt.Sprintf("user %q cannot get virtualmachineinstances/%s in API group %q in namespace %q", user.GetName(), ScreenshotSubresource, group, namespace)
		if reason != "" {
			msg += ": " + reason
		}
		if err != nil {
			msg += fmt.Sprintf(" (%v)", err)
		}
		return nil, apierrors.NewForbidden(gr, name, fmt.Errorf("%s", msg))
	}
	ctx = genericapirequest.WithNamespace(ctx, namespace)
	vmi, err := storeutil.Get[*v1.VirtualMachineInstance](ctx, s.vmis, name)
	if err != nil {
		return nil, err
	}
	if err := Streamable(vmi, "screenshot"); err != nil {
		return nil, err
	}
	q := url.Values{}
	if v := query.Get("moveCursor"); v != "" {
		q.Set("moveCursor", v)
	}
	p, err := s.agents.Proxy(vmi.Status.NodeName, nodeagentapi.VMIPath(namespace, name, ScreenshotSubresource), q, false, agentclient.PlainErrors)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("the screenshot of VMI %s/%s is unavailable: %v", namespace, name, err))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out := req.Clone(req.Context())
		out.Header = http.Header{"Accept": []string{"image/png"}}
		p.ServeHTTP(w, out)
	}), nil
}
