package vm

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/apply"
	"github.com/vireo-dev/vireo/apis/instancetype/infer"
)

// Sizes finds what a VM's instancetype and preference matchers name, and the volumes they are
// inferred from.
type Sizes struct {
	Finder  apply.Finder
	Volumes infer.Sources
}

// prepare does at admission what KubeVirt's VM mutation does with instancetypes, before the
// defaults are filled in: matchers that name a volume (inferFromVolume) get the instancetype
// and preference the volume's labels name; the preference's architecture and machine type are
// written into the template and its storage class into the DataVolume templates, where they are
// unset. A failure leaves the VM as it is; validation then reports it.
func (s Sizes) prepare(ctx context.Context, o *v1.VirtualMachine) {
	if o.Spec.Template == nil || o.Spec.Instancetype == nil && o.Spec.Preference == nil {
		return
	}
	_ = infer.Matchers(ctx, s.Volumes, o)
	m := o.Spec.Preference
	if m == nil || m.Name == "" {
		return
	}
	pref, err := s.Finder.Preference(ctx, o.Namespace, apply.PreferenceKind(m.Kind), m.Name, m.RevisionName)
	if err != nil {
		return
	}
	spec := &o.Spec.Template.Spec
	if pref.PreferredArchitecture != nil && spec.Architecture == "" {
		spec.Architecture = *pref.PreferredArchitecture
	}
	if pref.Machine != nil && pref.Machine.PreferredMachineType != "" && (spec.Domain.Machine == nil || spec.Domain.Machine.Type == "") {
		spec.Domain.Machine = &v1.Machine{Type: pref.Machine.PreferredMachineType}
	}
	if pref.Volumes == nil || pref.Volumes.PreferredStorageClassName == "" {
		return
	}
	for i := range o.Spec.DataVolumeTemplates {
		dv := &o.Spec.DataVolumeTemplates[i].Spec
		if dv.PVC != nil && dv.PVC.StorageClassName == nil {
			dv.PVC.StorageClassName = &pref.Volumes.PreferredStorageClassName
		}
		if dv.Storage != nil && dv.Storage.StorageClassName == nil {
			dv.Storage.StorageClassName = &pref.Volumes.PreferredStorageClassName
		}
	}
}

// check refuses a VM whose matchers could not be inferred (prepare left inferFromVolume; the
// inference is repeated for its error), whose template sets what its instancetype sets (KubeVirt's
// conflict message names every field), or that falls short of its preference's requirements.
// Pinned versions (revisionName) are checked, not the current objects. An instancetype or
// preference that does not exist (yet) is no error, as in KubeVirt: manifests apply in any order;
// the VM cannot start until it exists, and its status says so.
func (s Sizes) check(ctx context.Context, o *v1.VirtualMachine) field.ErrorList {
	// A VM being deleted is not checked, as in KubeVirt: the removal of its finalizers must not
	// fail because its instancetype changed meanwhile.
	if o.Spec.Template == nil || o.Spec.Instancetype == nil && o.Spec.Preference == nil || o.DeletionTimestamp != nil {
		return nil
	}
	if inferring(o) {
		return field.ErrorList{inferFailed(infer.Matchers(ctx, s.Volumes, o.DeepCopy()))}
	}
	it, pref, err := apply.Find(ctx, s.Finder, o)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return field.ErrorList{findFailed(err)}
	}
	t := o.Spec.Template.DeepCopy()
	if errs := apply.Spec(field.NewPath("spec", "template", "spec"), it, pref, &t.Spec, &t.ObjectMeta).Errors(); len(errs) > 0 {
		return errs
	}
	if err := apply.Requirements(it, pref, &t.Spec); err != nil {
		return field.ErrorList{err}
	}
	return nil
}

func inferring(o *v1.VirtualMachine) bool {
	return o.Spec.Instancetype != nil && o.Spec.Instancetype.InferFromVolume != "" ||
		o.Spec.Preference != nil && o.Spec.Preference.InferFromVolume != ""
}

// inferFailed names the matcher that could not be inferred and why.
func inferFailed(err error) *field.Error {
	var m *infer.MatcherError
	if !errors.As(err, &m) {
		// The volume's labels appeared between admission's two reads.
		return field.Invalid(field.NewPath("spec", "instancetype", "inferFromVolume"), "", "the volume changed while the VM was admitted; apply it again")
	}
	return field.Invalid(field.NewPath(m.Field), field.OmitValueType{}, m.Err.Error())
}

// findFailed names the instancetype or preference that could not be read.
func findFailed(err error) *field.Error {
	path := field.NewPath("spec", "instancetype", "name")
	var find *apply.FindError
	if errors.As(err, &find) && find.Field == "spec.preference" {
		path = field.NewPath("spec", "preference", "name")
	}
	return field.InternalError(path, err)
}
