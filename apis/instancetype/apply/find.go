package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// The kinds a VM's matchers name; an empty kind means the cluster-wide one.
const (
	KindInstancetype        = "VirtualMachineInstancetype"
	KindClusterInstancetype = "VirtualMachineClusterInstancetype"
	KindPreference          = "VirtualMachinePreference"
	KindClusterPreference   = "VirtualMachineClusterPreference"
)

// Finder reads the instancetypes and preferences VMs name: from vireo-apiserver's own storage
// (admission, expand-spec) or through the API (the VM controller).
type Finder interface {
	// Instancetype returns the spec of the instancetype of kind (KindInstancetype, in namespace,
	// or KindClusterInstancetype) called name: the version the ControllerRevision revision (in
	// namespace) holds when revision is set, else the current object.
	Instancetype(ctx context.Context, namespace, kind, name, revision string) (*v1beta1.VirtualMachineInstancetypeSpec, error)
	// Preference returns the spec of a preference likewise.
	Preference(ctx context.Context, namespace, kind, name, revision string) (*v1beta1.VirtualMachinePreferenceSpec, error)
}

// InstancetypeKind is the kind a matcher's kind names, in KubeVirt's spelling (any case; empty is
// the cluster-wide kind).
func InstancetypeKind(kind string) string {
	if strings.EqualFold(kind, KindInstancetype) {
		return KindInstancetype
	}
	return KindClusterInstancetype
}

// PreferenceKind is InstancetypeKind for preferences.
func PreferenceKind(kind string) string {
	if strings.EqualFold(kind, KindPreference) {
		return KindPreference
	}
	return KindClusterPreference
}

// Find reads the instancetype and preference vm names (nil where it names none), in the
// versions their revisionNames pin, else the current ones.
func Find(ctx context.Context, f Finder, vm *v1.VirtualMachine) (*v1beta1.VirtualMachineInstancetypeSpec, *v1beta1.VirtualMachinePreferenceSpec, error) {
	var it *v1beta1.VirtualMachineInstancetypeSpec
	var pref *v1beta1.VirtualMachinePreferenceSpec
	var err error
	if m := vm.Spec.Instancetype; m != nil {
		if it, err = f.Instancetype(ctx, vm.Namespace, InstancetypeKind(m.Kind), m.Name, m.RevisionName); err != nil {
			return nil, nil, &FindError{Field: "spec.instancetype", Err: err}
		}
	}
	if m := vm.Spec.Preference; m != nil {
		if pref, err = f.Preference(ctx, vm.Namespace, PreferenceKind(m.Kind), m.Name, m.RevisionName); err != nil {
			return nil, nil, &FindError{Field: "spec.preference", Err: err}
		}
	}
	return it, pref, nil
}

// FindError says which of a VM's matchers (spec.instancetype or spec.preference) could not be
// read.
type FindError struct {
	Field string
	Err   error
}

func (e *FindError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap is the error of the read.
func (e *FindError) Unwrap() error { return e.Err }

// ErrConflicts is returned by Expand for a VM whose template sets what its instancetype sets.
var ErrConflicts = errors.New("conflicts with the instancetype")

// InstancetypeOf decodes the instancetype a ControllerRevision's data holds (either kind: the
// same spec).
func InstancetypeOf(revision string, data []byte) (*v1beta1.VirtualMachineInstancetypeSpec, error) {
	var obj v1beta1.VirtualMachineInstancetype
	if err := json.Unmarshal(data, &obj); err != nil || obj.Kind != KindInstancetype && obj.Kind != KindClusterInstancetype {
		return nil, fmt.Errorf("ControllerRevision %s holds no instancetype", revision)
	}
	return &obj.Spec, nil
}

// PreferenceOf decodes the preference a ControllerRevision's data holds.
func PreferenceOf(revision string, data []byte) (*v1beta1.VirtualMachinePreferenceSpec, error) {
	var obj v1beta1.VirtualMachinePreference
	if err := json.Unmarshal(data, &obj); err != nil || obj.Kind != KindPreference && obj.Kind != KindClusterPreference {
		return nil, fmt.Errorf("ControllerRevision %s holds no preference", revision)
	}
	return &obj.Spec, nil
}

// Expand returns a copy of vm with its instancetype and preference applied to its
// template and spec.instancetype and spec.preference removed: what KubeVirt's expand-spec shows.
func Expand(ctx context.Context, f Finder, vm *v1.VirtualMachine) (*v1.VirtualMachine, error) {
	out := vm.DeepCopy()
	if out.Spec.Instancetype == nil && out.Spec.Preference == nil || out.Spec.Template == nil {
		return out, nil
	}
	it, pref, err := Find(ctx, f, vm)
	if err != nil {
		return nil, err
	}
	if c := Spec(field.NewPath("spec", "template", "spec"), it, pref, &out.Spec.Template.Spec, &out.Spec.Template.ObjectMeta); len(c) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrConflicts, c.Errors()[0].Detail)
	}
	out.Spec.Instancetype, out.Spec.Preference = nil, nil
	return out, nil
}
