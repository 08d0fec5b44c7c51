// Package infer fills in a VM's instancetype and preference from the labels of one of its volumes
// (spec.instancetype.inferFromVolume, spec.preference.inferFromVolume), as KubeVirt's VM
// admission does: the volume's PersistentVolumeClaim, or its DataVolume (its labels first, then
// the claim it clones), names them with the instancetype.kubevirt.io/default-* labels. The
// lookups are an interface; the logic is pure.
package infer

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// The labels a volume names its VM's defaults with.
const (
	DefaultInstancetypeLabel     = "instancetype.kubevirt.io/default-instancetype"
	DefaultInstancetypeKindLabel = "instancetype.kubevirt.io/default-instancetype-kind"
	DefaultPreferenceLabel       = "instancetype.kubevirt.io/default-preference"
	DefaultPreferenceKindLabel   = "instancetype.kubevirt.io/default-preference-kind"
)

// Sources reads the objects a volume refers to.
type Sources interface {
	// ClaimLabels returns the labels of a PersistentVolumeClaim.
	ClaimLabels(ctx context.Context, namespace, name string) (map[string]string, error)
	// DataVolume returns a DataVolume.
	DataVolume(ctx context.Context, namespace, name string) (*cdiv1beta1.DataVolume, error)
}

// IgnorableError is a failure the policy Ignore lets pass (the volume is of a kind that cannot
// name defaults, or it names none); any other failure refuses the VM whatever the policy.
type IgnorableError struct{ Err error }

func (e *IgnorableError) Error() string { return e.Err.Error() }

// Unwrap is the failure.
func (e *IgnorableError) Unwrap() error { return e.Err }

func ignorable(format string, args ...any) error {
	return &IgnorableError{Err: fmt.Errorf(format, args...)}
}

// Matchers replaces each matcher of vm that names a volume with the instancetype or preference
// the volume's labels name. With the failure policy Ignore, a matcher whose volume names none is
// removed, and an inferred instancetype removes the template's memory (which the VM gave for
// the case inference fails, and which would now conflict). vm is left unchanged on error.
func Matchers(ctx context.Context, src Sources, vm *v1.VirtualMachine) error {
	if vm.Spec.Template == nil {
		return nil
	}
	out := vm.DeepCopy()
	if m := out.Spec.Instancetype; m != nil && m.InferFromVolume != "" {
		found, err := inferOne(ctx, src, out, m.InferFromVolume, m.InferFromVolumeFailurePolicy,
			DefaultInstancetypeLabel, DefaultInstancetypeKindLabel, "spec.instancetype.inferFromVolume")
		if err != nil {
			return err
		}
		out.Spec.Instancetype = nil
		if found != nil {
			if ignoresFailure(m.InferFromVolumeFailurePolicy) {
				out.Spec.Template.Spec.Domain.Memory = nil
			}
			out.Spec.Instancetype = &v1.InstancetypeMatcher{Name: found.name, Kind: found.kind}
		}
	}
	if m := out.Spec.Preference; m != nil && m.InferFromVolume != "" {
		found, err := inferOne(ctx, src, out, m.InferFromVolume, m.InferFromVolumeFailurePolicy,
			DefaultPreferenceLabel, DefaultPreferenceKindLabel, "spec.preference.inferFromVolume")
		if err != nil {
			return err
		}
		out.Spec.Preference = nil
		if found != nil {
			out.Spec.Preference = &v1.PreferenceMatcher{Name: found.name, Kind: found.kind}
		}
	}
	*vm = *out
	return nil
}

// named is what a volume's labels name.
type named struct{ name, kind string }

// inferOne reads what the volume's labels name for one matcher (at field); nil when the policy
// Ignore lets a volume that names nothing pass, and the matcher is dropped.
func inferOne(ctx context.Context, src Sources, vm *v1.VirtualMachine, volume string, policy *v1.InferFromVolumeFailurePolicy,
	nameLabel, kindLabel, field string) (*named, error) {
	name, kind, err := fromVolume(ctx, src, vm, volume, nameLabel, kindLabel)
	switch {
	case err != nil && ignoresFailure(policy) && isIgnorable(err):
		return nil, nil
	case err != nil:
		return nil, &MatcherError{Field: field, Err: err}
	}
	return &named{name: name, kind: kind}, nil
}

func ignoresFailure(policy *v1.InferFromVolumeFailurePolicy) bool {
	return policy != nil && *policy == v1.IgnoreInferFromVolumeFailure
}

// MatcherError says which matcher could not be inferred.
type MatcherError struct {
	// Field is spec.instancetype.inferFromVolume or spec.preference.inferFromVolume.
	Field string
	Err   error
}

func (e *MatcherError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap is the failure.
func (e *MatcherError) Unwrap() error { return e.Err }

func isIgnorable(err error) bool {
	var ie *IgnorableError
	return errors.As(err, &ie)
}

// volumeSource reads the labels of what one volume refers to.
type volumeSource struct {
	ctx                  context.Context
	src                  Sources
	vm                   *v1.VirtualMachine
	nameLabel, kindLabel string
}

// fromVolume returns the name and kind the labels of the volume called volume name.
func fromVolume(ctx context.Context, src Sources, vm *v1.VirtualMachine, volume, nameLabel, kindLabel string) (string, string, error) {
	s := volumeSource{ctx: ctx, src: src, vm: vm, nameLabel: nameLabel, kindLabel: kindLabel}
	for _, v := range vm.Spec.Template.Spec.Volumes {
		if v.Name != volume {
			continue
		}
		switch {
		case v.PersistentVolumeClaim != nil:
			return s.fromClaim(vm.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.DataVolume != nil:
			return s.fromDataVolume(v.DataVolume.Name)
		}
		return "", "", ignorable("unable to infer defaults from volume %s as type is not supported", volume)
	}
	return "", "", fmt.Errorf("unable to find volume %s to infer defaults", volume)
}

func (s volumeSource) fromLabels(labels map[string]string) (string, string, error) {
	name, ok := labels[s.nameLabel]
	if !ok {
		return "", "", ignorable("unable to find required %s label on the volume", s.nameLabel)
	}
	return name, labels[s.kindLabel], nil
}

func (s volumeSource) fromClaim(namespace, name string) (string, string, error) {
	labels, err := s.src.ClaimLabels(s.ctx, namespace, name)
	if err != nil {
		return "", "", err
	}
	return s.fromLabels(labels)
}

// fromDataVolume reads the VM's DataVolume template of that name, else the DataVolume (its
// labels, then what it clones), else (a DataVolume garbage-collected after import) the claim of
// that name.
func (s volumeSource) fromDataVolume(name string) (string, string, error) {
	for _, t := range s.vm.Spec.DataVolumeTemplates {
		if t.ObjectMeta.Name == name {
			return s.fromDataVolumeSpec(&t.Spec)
		}
	}
	dv, err := s.src.DataVolume(s.ctx, s.vm.Namespace, name)
	if apierrors.IsNotFound(err) {
		return s.fromClaim(s.vm.Namespace, name)
	}
	if err != nil {
		return "", "", err
	}
	if n, k, err := s.fromLabels(dv.Labels); err == nil {
		return n, k, nil
	}
	return s.fromDataVolumeSpec(&dv.Spec)
}

func (s volumeSource) fromDataVolumeSpec(spec *cdiv1beta1.DataVolumeSpec) (string, string, error) {
	if spec.Source != nil && spec.Source.PVC != nil {
		return s.fromClaim(spec.Source.PVC.Namespace, spec.Source.PVC.Name)
	}
	return "", "", ignorable("unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported")
}
