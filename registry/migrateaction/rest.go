// Package migrateaction serves the migrate subresource of VirtualMachines and
// VirtualMachineInstances (PUT .../{virtualmachines,virtualmachineinstances}/NAME/migrate with
// KubeVirt's MigrateOptions, answering 202): it creates a VirtualMachineInstanceMigration of the
// VMI through the migration store, whose admission refuses a VMI that is not migratable or
// already migrating. Authorization (update on the subresource, KubeVirt's kubevirt.io:migrate
// role) happened in the server's filters; the migration is created as the requesting user.
package migrateaction

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Name is the subresource's name.
const Name = "migrate"

// GenerateName prefixes the migrations the subresource creates (KubeVirt's).
const GenerateName = "kubevirt-migrate-vm-"

// Options are KubeVirt's MigrateOptions.
type Options struct {
	// AddedNodeSelector narrows where the target may run.
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty"`
	// DryRun ["All"] checks the migration without creating it.
	DryRun []string `json:"dryRun,omitempty"`
}

// Getter reads objects of a store.
type Getter interface {
	Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
}

// Creater creates migrations (the migration store).
type Creater interface {
	Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error)
}

// REST is the migrate subresource of VirtualMachines (vms set) or VirtualMachineInstances.
type REST struct {
	storeutil.PutAction
	vms        Getter // nil for the VMI subresource
	vmis       Getter
	migrations Creater
}

var _ rest.Connecter = &REST{}

// ForVMs is the subresource virtualmachines/migrate.
func ForVMs(vms, vmis Getter, migrations Creater) *REST {
	return newREST(vms, vmis, migrations, func() runtime.Object { return &v1.VirtualMachine{} })
}

// ForVMIs is the subresource virtualmachineinstances/migrate.
func ForVMIs(vmis Getter, migrations Creater) *REST {
	return newREST(nil, vmis, migrations, func() runtime.Object { return &v1.VirtualMachineInstance{} })
}

func newREST(vms, vmis Getter, migrations Creater, object func() runtime.Object) *REST {
	r := &REST{vms: vms, vmis: vmis, migrations: migrations}
	r.PutAction = storeutil.PutAction{Object: object, Success: http.StatusAccepted, Serve: r.serve}
	return r
}

// serve checks that the VMI runs and creates its migration (or, with dryRun, validates it).
func (r *REST) serve(ctx context.Context, name string, req *http.Request) error {
	var o Options
	if err := storeutil.ReadOptions(req, Name, "MigrateOptions", &o); err != nil {
		return err
	}
	dryRun, err := storeutil.DryRun(Name, o.DryRun)
	if err != nil {
		return err
	}
	if err := r.checkRunning(ctx, name); err != nil {
		return err
	}
	m := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: GenerateName},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: name, AddedNodeSelector: o.AddedNodeSelector},
	}
	opts := &metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = r.migrations.Create(ctx, m, rest.ValidateAllObjectFunc, opts)
	return err
}

// checkRunning answers 404 for no such VM or VMI and 409 when the VMI does not run (KubeVirt's
// "VM is not running").
func (r *REST) checkRunning(ctx context.Context, name string) error {
	var vm *v1.VirtualMachine
	if r.vms != nil {
		obj, err := r.vms.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		vm = obj.(*v1.VirtualMachine)
	}
	obj, err := r.vmis.Get(ctx, name, &metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && vm != nil:
		return apierrors.NewConflict(v1.Resource("virtualmachines"), name, fmt.Errorf("VM is not running"))
	case err != nil:
		return err
	}
	vmi := obj.(*v1.VirtualMachineInstance)
	if vm != nil && !metav1.IsControlledBy(vmi, vm) {
		return apierrors.NewConflict(v1.Resource("virtualmachines"), name, fmt.Errorf("VM is not running: VMI %s does not belong to it", name))
	}
	if vmi.Status.Phase != v1.Running {
		phase := string(vmi.Status.Phase)
		if phase == "" {
			phase = string(v1.Pending)
		}
		gr := v1.Resource("virtualmachineinstances")
		if vm != nil {
			gr = v1.Resource("virtualmachines")
		}
		return apierrors.NewConflict(gr, name, fmt.Errorf("VMI is not running (phase %s): only a running VMI migrates", phase))
	}
	return nil
}
