// Package vmaction serves the VirtualMachine actions start, stop and restart (PUT
// .../virtualmachines/NAME/{start,stop,restart}, KubeVirt's bodies and answers): it reads the VM
// and its VMI, applies KubeVirt's rules for the VM's run strategy (registry/vm) and writes the
// change, a new run strategy in the spec or state change requests in the status, that the VM
// controller then carries out. Authorization (update on the subresource) happened in the
// server's filters; the write is the server's own.
package vmaction

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/retry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
	"github.com/vireo-dev/vireo/registry/vm"
)

// Actions are the subresource names.
const (
	Start   = "start"
	Stop    = "stop"
	Restart = "restart"
)

// Names lists the actions.
var Names = []string{Start, Stop, Restart}

// Store is what an action reads and writes through: the VM store, its /status store and the
// VMI store.
type Store interface {
	Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
	Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
		updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error)
}

// REST is one action subresource of virtualmachines.
type REST struct {
	storeutil.PutAction
	action               string
	vms, vmsStatus, vmis Store
}

// New returns the action subresource (Start, Stop or Restart).
func New(action string, vms, vmsStatus, vmis Store) *REST {
	r := &REST{action: action, vms: vms, vmsStatus: vmsStatus, vmis: vmis}
	r.PutAction = storeutil.PutAction{Object: func() runtime.Object { return &v1.VirtualMachine{} }, Success: http.StatusAccepted, Serve: r.serve}
	return r
}

var _ rest.Connecter = &REST{}

// serve decodes the options and applies the action, retrying when the VM changed meanwhile.
func (r *REST) serve(ctx context.Context, name string, req *http.Request) error {
	decide, dryRun, err := r.decoder(req)
	if err != nil {
		return err
	}
	// The rules' refusals are 409s too: keep them apart from a version conflict, which is retried.
	var refused error
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := r.vms.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		current := obj.(*v1.VirtualMachine)
		var vmi *v1.VirtualMachineInstance
		if o, err := r.vmis.Get(ctx, name, &metav1.GetOptions{}); err == nil {
			if i := o.(*v1.VirtualMachineInstance); metav1.IsControlledBy(i, current) {
				vmi = i
			}
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		change, err := decide(current, vmi)
		if err != nil {
			refused = err
			return nil
		}
		if dryRun {
			return nil
		}
		return r.write(ctx, current, vmi, change)
	})
	if refused != nil {
		return refused
	}
	return err
}

// write stores a change: a shorter grace period in the VMI's spec first, then the requests
// through /status, then the run strategy through the main store (which keeps the status as it
// is), so the controller never sees the new strategy without the requests that say how to start.
func (r *REST) write(ctx context.Context, current *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, change vm.Change) error {
	if g := change.VMIGracePeriod; g != nil && vmi != nil {
		// First, so that the node agent sees the shorter grace period before the deletion.
		updated := vmi.DeepCopy()
		updated.Spec.TerminationGracePeriodSeconds = g
		if _, _, err := r.vmis.Update(ctx, vmi.Name, rest.DefaultUpdatedObjectInfo(updated), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if len(change.Requests) > 0 {
		updated := current.DeepCopy()
		vm.Change{Requests: change.Requests}.Apply(updated)
		obj, _, err := r.vmsStatus.Update(ctx, current.Name, rest.DefaultUpdatedObjectInfo(updated), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		current = obj.(*v1.VirtualMachine)
	}
	if change.RunStrategy == nil {
		return nil
	}
	updated := current.DeepCopy()
	vm.Change{RunStrategy: change.RunStrategy}.Apply(updated)
	_, _, err := r.vms.Update(ctx, current.Name, rest.DefaultUpdatedObjectInfo(updated), nil, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// decoder reads the action's options body (empty means none) and returns its rule and whether
// it is a dry run.
func (r *REST) decoder(req *http.Request) (func(*v1.VirtualMachine, *v1.VirtualMachineInstance) (vm.Change, error), bool, error) {
	decode := func(into any) error {
		return storeutil.ReadOptions(req, r.action, title(r.action)+"Options", into)
	}
	var rule func(*v1.VirtualMachine, *v1.VirtualMachineInstance) (vm.Change, error)
	var dryRun []string
	var err error
	switch r.action {
	case Start:
		var o vm.StartOptions
		err = decode(&o)
		rule, dryRun = func(x *v1.VirtualMachine, i *v1.VirtualMachineInstance) (vm.Change, error) { return vm.Start(x, i, o) }, o.DryRun
	case Stop:
		var o vm.StopOptions
		err = decode(&o)
		rule, dryRun = func(x *v1.VirtualMachine, i *v1.VirtualMachineInstance) (vm.Change, error) { return vm.Stop(x, i, o) }, o.DryRun
	case Restart:
		var o vm.RestartOptions
		err = decode(&o)
		rule, dryRun = func(x *v1.VirtualMachine, i *v1.VirtualMachineInstance) (vm.Change, error) {
			return vm.Restart(x, i, o)
		}, o.DryRun
	default:
		return nil, false, apierrors.NewNotFound(v1.Resource("virtualmachines/"+r.action), "")
	}
	if err != nil {
		return nil, false, err
	}
	dry, err := storeutil.DryRun(r.action, dryRun)
	return rule, dry, err
}

func title(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
