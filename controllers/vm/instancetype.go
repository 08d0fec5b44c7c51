package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/apply"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// sizes are the instancetype and preference a VMI was made with, for the VM's status.
type sizes struct {
	instancetype, preference *v1.InstancetypeStatusRef
}

// applySizes applies the instancetype and preference vm names to vmi, made from its template. The
// version used is a ControllerRevision owned by the VM: the one spec.*.revisionName pins, or a
// capture of the current object (its name carries a hash of it, so an unchanged object reuses its
// revision). Edits of an instancetype so reach a VM when it next starts, never while it runs.
func (c *Controller) applySizes(ctx context.Context, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) (sizes, error) {
	var out sizes
	var it *v1beta1.VirtualMachineInstancetypeSpec
	var pref *v1beta1.VirtualMachinePreferenceSpec
	if m := vm.Spec.Instancetype; m != nil {
		kind := apply.InstancetypeKind(m.Kind)
		rev, err := c.revision(ctx, vm, kind, m.Name, m.RevisionName)
		if err != nil {
			return out, fmt.Errorf("spec.instancetype: %w", err)
		}
		if it, err = apply.InstancetypeOf(rev.Name, rev.Data.Raw); err != nil {
			return out, err
		}
		out.instancetype = &v1.InstancetypeStatusRef{Name: m.Name, Kind: kind, ControllerRevisionRef: &v1.ControllerRevisionRef{Name: rev.Name}}
	}
	if m := vm.Spec.Preference; m != nil {
		kind := apply.PreferenceKind(m.Kind)
		rev, err := c.revision(ctx, vm, kind, m.Name, m.RevisionName)
		if err != nil {
			return out, fmt.Errorf("spec.preference: %w", err)
		}
		if pref, err = apply.PreferenceOf(rev.Name, rev.Data.Raw); err != nil {
			return out, err
		}
		out.preference = &v1.InstancetypeStatusRef{Name: m.Name, Kind: kind, ControllerRevisionRef: &v1.ControllerRevisionRef{Name: rev.Name}}
	}
	if conflicts := apply.Spec(field.NewPath("spec", "template", "spec"), it, pref, &vmi.Spec, &vmi.ObjectMeta); len(conflicts) > 0 {
		return out, fmt.Errorf("%s", conflicts.Errors()[0].Detail)
	}
	return out, nil
}

// revision returns the ControllerRevision named pinned, or the capture of the current object of
// kind called name (created when missing).
func (c *Controller) revision(ctx context.Context, vm *v1.VirtualMachine, kind, name, pinned string) (*appsv1.ControllerRevision, error) {
	revisions := c.kube.AppsV1().ControllerRevisions(vm.Namespace)
	if pinned != "" {
		return revisions.Get(ctx, pinned, metav1.GetOptions{})
	}
	obj, err := c.current(ctx, vm.Namespace, kind, name)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            revisionName(vm.Name, kind, name, hex.EncodeToString(sum[:5])),
			Namespace:       vm.Namespace,
			Labels:          map[string]string{NameLabel: vm.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, v1.SchemeGroupVersion.WithKind("VirtualMachine"))},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}
	created, err := revisions.Create(ctx, rev, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return revisions.Get(ctx, rev.Name, metav1.GetOptions{})
	}
	return created, err
}

// revisionName is <vm>-<kind>-<name>-<hash>, within the 253 characters of a name.
func revisionName(vm, kind, name, hash string) string {
	short := strings.ToLower(strings.TrimPrefix(kind, "VirtualMachine"))
	n := fmt.Sprintf("%s-%s-%s", vm, short, name)
	return n[:min(len(n), 253-len(hash)-1)] + "-" + hash
}

// current reads the object of kind called name, with its apiVersion and kind set (they are
// kept in the revision).
func (c *Controller) current(ctx context.Context, namespace, kind, name string) (runtime.Object, error) {
	api := c.client.InstancetypeV1beta1()
	var obj runtime.Object
	var err error
	switch kind {
	case apply.KindInstancetype:
		obj, err = api.VirtualMachineInstancetypes(namespace).Get(ctx, name, metav1.GetOptions{})
	case apply.KindClusterInstancetype:
		obj, err = api.VirtualMachineClusterInstancetypes().Get(ctx, name, metav1.GetOptions{})
	case apply.KindPreference:
		obj, err = api.VirtualMachinePreferences(namespace).Get(ctx, name, metav1.GetOptions{})
	default:
		obj, err = api.VirtualMachineClusterPreferences().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(v1beta1.SchemeGroupVersion.WithKind(kind))
	return obj, nil
}
