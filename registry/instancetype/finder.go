package instancetype

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/vireo-dev/vireo/apis/instancetype/apply"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Finder reads instancetypes and preferences from vireo-apiserver's own storage, for admission
// and expand-spec; and the versions VMs pin from the ControllerRevisions the VM controller made.
type Finder struct {
	Instancetypes, ClusterInstancetypes, Preferences, ClusterPreferences *storeutil.REST
	// Revision returns the data of a ControllerRevision (nil without the core API: pins are then
	// read as the current objects, as there is no VM controller to have made them).
	Revision func(ctx context.Context, namespace, name string) ([]byte, error)
}

var _ apply.Finder = &Finder{}

// Instancetype returns the spec of an instancetype.
func (f *Finder) Instancetype(ctx context.Context, namespace, kind, name, revision string) (*v1beta1.VirtualMachineInstancetypeSpec, error) {
	if revision != "" && f.Revision != nil {
		data, err := f.Revision(ctx, namespace, revision)
		if err != nil {
			return nil, err
		}
		return apply.InstancetypeOf(revision, data)
	}
	if kind == apply.KindInstancetype {
		obj, err := f.Instancetypes.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		if err != nil {
			return nil, named(err, v1beta1.Resource("virtualmachineinstancetypes"), name)
		}
		return &obj.(*v1beta1.VirtualMachineInstancetype).Spec, nil
	}
	obj, err := f.ClusterInstancetypes.Get(genericapirequest.WithNamespace(ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return nil, named(err, v1beta1.Resource("virtualmachineclusterinstancetypes"), name)
	}
	return &obj.(*v1beta1.VirtualMachineClusterInstancetype).Spec, nil
}

// Preference returns the spec of a preference.
func (f *Finder) Preference(ctx context.Context, namespace, kind, name, revision string) (*v1beta1.VirtualMachinePreferenceSpec, error) {
	if revision != "" && f.Revision != nil {
		data, err := f.Revision(ctx, namespace, revision)
		if err != nil {
			return nil, err
		}
		return apply.PreferenceOf(revision, data)
	}
	if kind == apply.KindPreference {
		obj, err := f.Preferences.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		if err != nil {
			return nil, named(err, v1beta1.Resource("virtualmachinepreferences"), name)
		}
		return &obj.(*v1beta1.VirtualMachinePreference).Spec, nil
	}
	obj, err := f.ClusterPreferences.Get(genericapirequest.WithNamespace(ctx, ""), name, &metav1.GetOptions{})
	if err != nil {
		return nil, named(err, v1beta1.Resource("virtualmachineclusterpreferences"), name)
	}
	return &obj.(*v1beta1.VirtualMachineClusterPreference).Spec, nil
}

// named gives a not-found error the resource that was looked for (the store names the resource
// of the request, a VM's).
func named(err error, resource schema.GroupResource, name string) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(resource, name)
	}
	return err
}
