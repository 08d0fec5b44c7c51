// Package expandspec serves KubeVirt's expand-spec: a VM with its instancetype and preference
// applied to its template (GET virtualmachines/NAME/expand-spec, for a stored VM; PUT
// namespaces/NS/expand-vm-spec with a VM in the body, for one not stored), which
// `virtctl expand` prints.
package expandspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/apply"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Subresource is the VM subresource; NamespacedPath the namespaced one.
const (
	Subresource    = "expand-spec"
	NamespacedPath = "expand-vm-spec"
)

// maxBody bounds a VM sent to expand-vm-spec.
const maxBody = 3 << 20

// REST is virtualmachines/expand-spec.
type REST struct {
	vms   storeutil.Getter
	sizes apply.Finder
}

// New serves expand-spec of the VMs in vms, with the instancetypes and preferences sizes finds.
func New(vms storeutil.Getter, sizes apply.Finder) *REST { return &REST{vms: vms, sizes: sizes} }

var _ rest.Connecter = &REST{}

// New is the object the subresource is attached to.
func (r *REST) New() runtime.Object { return &v1.VirtualMachine{} }

// Destroy releases nothing.
func (r *REST) Destroy() {}

// ConnectMethods: GET.
func (r *REST) ConnectMethods() []string { return []string{http.MethodGet} }

// NewConnectOptions: none.
func (r *REST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// Connect answers the expanded VM.
func (r *REST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	vm, err := storeutil.Get[*v1.VirtualMachine](ctx, r.vms, name)
	if err != nil {
		return nil, err
	}
	expanded, err := Expand(ctx, r.sizes, vm)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { write(w, expanded) }), nil
}

// Expand expands vm, with KubeVirt's answers: 404 for a missing instancetype or preference, 400
// for a conflict.
func Expand(ctx context.Context, sizes apply.Finder, vm *v1.VirtualMachine) (*v1.VirtualMachine, error) {
	expanded, err := apply.Expand(ctx, sizes, vm)
	switch {
	case errors.Is(err, apply.ErrConflicts):
		return nil, apierrors.NewBadRequest(err.Error())
	case apierrors.IsNotFound(err):
		return nil, err
	case err != nil:
		return nil, apierrors.NewInternalError(err)
	}
	expanded.APIVersion, expanded.Kind = v1.SchemeGroupVersion.String(), "VirtualMachine"
	return expanded, nil
}

// ServeNamespaced answers PUT namespaces/NS/expand-vm-spec: the VM in the body, expanded in NS.
func ServeNamespaced(ctx context.Context, sizes apply.Finder, namespace string, w http.ResponseWriter, req *http.Request, fail func(error)) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		fail(apierrors.NewBadRequest(fmt.Sprintf("reading the VM to expand (at most %d bytes): %v", maxBody, err)))
		return
	}
	vm := &v1.VirtualMachine{}
	if err := json.Unmarshal(body, vm); err != nil {
		fail(apierrors.NewBadRequest("the body is not a VirtualMachine: " + err.Error()))
		return
	}
	if vm.Namespace != "" && vm.Namespace != namespace {
		fail(apierrors.NewBadRequest(fmt.Sprintf("the VM's namespace %q is not the request's %q", vm.Namespace, namespace)))
		return
	}
	vm.Namespace = namespace
	expanded, err := Expand(ctx, sizes, vm)
	if err != nil {
		fail(err)
		return
	}
	write(w, expanded)
}

func write(w http.ResponseWriter, vm *v1.VirtualMachine) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(vm)
}
