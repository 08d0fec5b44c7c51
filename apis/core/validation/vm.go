package validation

import (
	"fmt"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cdivalidation "github.com/vireo-dev/vireo/apis/cdi/validation"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// runStrategies are the run strategies a VirtualMachine may use.
var runStrategies = []v1.VirtualMachineRunStrategy{
	v1.RunStrategyAlways, v1.RunStrategyRerunOnFailure, v1.RunStrategyManual,
	v1.RunStrategyHalted, v1.RunStrategyOnce,
}

// ValidateVirtualMachine validates a VirtualMachine that is being created: its metadata, run
// strategy, VMI template and DataVolume templates.
func ValidateVirtualMachine(vm *v1.VirtualMachine) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&vm.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateVirtualMachineSpec(vm, field.NewPath("spec"))...)
}

// ValidateVirtualMachineUpdate validates an update of a VirtualMachine. Its spec may change, so it
// is checked as on create.
func ValidateVirtualMachineUpdate(vm, old *v1.VirtualMachine) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&vm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if n, o := vm.Spec.Instancetype, old.Spec.Instancetype; n != nil && o != nil {
		errs = append(errs, validatePinnedRename(field.NewPath("spec", "instancetype"), n.Name, o.Name, n.RevisionName, o.RevisionName)...)
	}
	if n, o := vm.Spec.Preference, old.Spec.Preference; n != nil && o != nil {
		errs = append(errs, validatePinnedRename(field.NewPath("spec", "preference"), n.Name, o.Name, n.RevisionName, o.RevisionName)...)
	}
	return append(errs, validateVirtualMachineSpec(vm, field.NewPath("spec"))...)
}

// validatePinnedRename refuses a matcher whose name changes while it keeps pinning the old
// object's revision, as KubeVirt does (the revision would apply the old object under the new name).
func validatePinnedRename(path *field.Path, name, oldName, revision, oldRevision string) field.ErrorList {
	if oldRevision != "" && name != oldName && revision == oldRevision {
		return field.ErrorList{field.Invalid(path.Child("revisionName"), revision, "the Matcher Name has been updated without updating the RevisionName")}
	}
	return nil
}

// ValidateVirtualMachineSpec validates the spec of vm, found at fldPath (a VM's spec, or a
// VirtualMachinePool's template, in the pool's namespace).
func ValidateVirtualMachineSpec(vm *v1.VirtualMachine, fldPath *field.Path) field.ErrorList {
	return validateVirtualMachineSpec(vm, fldPath)
}

// validateVirtualMachineSpec validates the spec of vm, found at fldPath.
func validateVirtualMachineSpec(vm *v1.VirtualMachine, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	spec := &vm.Spec
	if spec.Running != nil && spec.RunStrategy != nil {
		errs = append(errs, field.Invalid(fldPath.Child("running"), *spec.Running,
			"spec.running and spec.runStrategy are mutually exclusive; remove spec.running and use only spec.runStrategy"))
	}
	if spec.Running == nil && spec.RunStrategy == nil {
		errs = append(errs, field.Required(fldPath.Child("runStrategy"),
			"spec.runStrategy must be specified (Always, RerunOnFailure, Manual, Halted or Once; spec.running is deprecated)"))
	}
	errs = append(errs, validateSizesAndVolumeUpdates(spec, fldPath)...)
	if spec.RunStrategy != nil {
		errs = append(errs, fieldcheck.Enum(*spec.RunStrategy, runStrategies, fldPath.Child("runStrategy"))...)
	}
	tPath := fldPath.Child("template")
	if spec.Template == nil {
		return append(errs, field.Required(tPath, "a VirtualMachine needs a template for the VirtualMachineInstance it runs"))
	}
	errs = append(errs, validateTemplate(spec.Template, tPath, spec.Instancetype != nil)...)
	return append(errs, validateDataVolumeTemplates(vm, fldPath)...)
}

// validateDataVolumeTemplates checks that every DataVolume template has a unique, valid name, lives
// in the VM's namespace, is used by a volume of the VMI template (as a dataVolume, or as a
// persistentVolumeClaim of the same name, as KubeVirt allows) and has a valid DataVolume spec.
func validateDataVolumeTemplates(vm *v1.VirtualMachine, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	used := map[string]bool{}
	if vm.Spec.Template != nil {
		for _, v := range vm.Spec.Template.Spec.Volumes {
			switch {
			case v.DataVolume != nil:
				used[v.DataVolume.Name] = true
			case v.PersistentVolumeClaim != nil:
				used[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	seen := map[string]bool{}
	for i := range vm.Spec.DataVolumeTemplates {
		dvt := &vm.Spec.DataVolumeTemplates[i]
		dPath := fldPath.Child("dataVolumeTemplates").Index(i)
		namePath := dPath.Child("metadata", "name")
		name := dvt.ObjectMeta.Name
		switch {
		case name == "":
			errs = append(errs, field.Required(namePath, "every DataVolume template needs a name"))
		case seen[name]:
			errs = append(errs, field.Duplicate(namePath, name))
		default:
			errs = append(errs, validateDNS1123Subdomain(name, namePath)...)
			if !used[name] {
				errs = append(errs, field.Invalid(namePath, name, fmt.Sprintf(
					"no volume of spec.template.spec.volumes uses this DataVolume; add a volume with dataVolume.name: %s "+
						"(or persistentVolumeClaim.claimName: %s)", name, name)))
			}
		}
		seen[name] = true
		if ns := dvt.ObjectMeta.Namespace; ns != "" && ns != vm.Namespace {
			errs = append(errs, field.Invalid(dPath.Child("metadata", "namespace"), ns,
				"must be empty or the VirtualMachine's own namespace "+vm.Namespace))
		}
		errs = append(errs, cdivalidation.ValidateDataVolumeSpec(&dvt.Spec, dPath.Child("spec"))...)
	}
	return errs
}

// ValidateVirtualMachineInstanceMigration validates a migration that is being created.
func ValidateVirtualMachineInstanceMigration(m *v1.VirtualMachineInstanceMigration) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&m.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateObjectName(m.Spec.VMIName, field.NewPath("spec", "vmiName"), "VirtualMachineInstance to migrate")...)
	return append(errs, metav1validation.ValidateLabels(m.Spec.AddedNodeSelector, field.NewPath("spec", "addedNodeSelector"))...)
}

// ValidateVirtualMachineInstanceMigrationUpdate validates an update of a migration: its spec may
// not change once the migration was requested.
func ValidateVirtualMachineInstanceMigrationUpdate(m, old *v1.VirtualMachineInstanceMigration) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&m.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if !apiequality.Semantic.DeepEqual(m.Spec, old.Spec) {
		errs = append(errs, immutableSpecError(m.Spec, old.Spec, field.NewPath("spec"),
			"to migrate another VirtualMachineInstance, create a new VirtualMachineInstanceMigration"))
	}
	return errs
}

// validateMatcher checks a VM's instancetype or preference (what: "Instancetype" or
// "Preference"): a name and one of kinds (or none: the cluster-wide kind), or instead a volume to
// infer them from, with a failure policy, as KubeVirt's VM admission checks them.
func validateMatcher(path *field.Path, what, name, kind, inferFromVolume string, policy *v1.InferFromVolumeFailurePolicy, kinds []string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case name == "" && inferFromVolume == "":
		errs = append(errs, field.Required(path, "Either Name or InferFromVolume should be provided within the "+what+"Matcher"))
	case inferFromVolume != "" && name != "":
		errs = append(errs, field.Forbidden(path.Child("name"), "Name already set, should be cleared before setting inferFromVolume"))
	}
	if inferFromVolume != "" && kind != "" {
		errs = append(errs, field.Forbidden(path.Child("kind"), "Kind already set, should be cleared before setting inferFromVolume"))
	} else if kind != "" && !slices.ContainsFunc(kinds, func(k string) bool { return strings.EqualFold(k, kind) }) {
		errs = append(errs, field.NotSupported(path.Child("kind"), kind, kinds))
	}
	if policy != nil && *policy != v1.IgnoreInferFromVolumeFailure && *policy != v1.RejectInferFromVolumeFailure {
		errs = append(errs, field.NotSupported(path.Child("inferFromVolumeFailurePolicy"), *policy,
			[]v1.InferFromVolumeFailurePolicy{v1.RejectInferFromVolumeFailure, v1.IgnoreInferFromVolumeFailure}))
	}
	return errs
}

// validateSizesAndVolumeUpdates checks the VM's instancetype and preference matchers, and refuses
// live storage migration on a volume change, which Vireo does not do yet, rather than ignoring it.
func validateSizesAndVolumeUpdates(spec *v1.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m := spec.Instancetype; m != nil {
		errs = append(errs, validateMatcher(fldPath.Child("instancetype"), "Instancetype", m.Name, m.Kind, m.InferFromVolume, m.InferFromVolumeFailurePolicy,
			[]string{"VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"})...)
	}
	if m := spec.Preference; m != nil {
		errs = append(errs, validateMatcher(fldPath.Child("preference"), "Preference", m.Name, m.Kind, m.InferFromVolume, m.InferFromVolumeFailurePolicy,
			[]string{"VirtualMachinePreference", "VirtualMachineClusterPreference"})...)
	}
	if s := spec.UpdateVolumesStrategy; s != nil {
		switch *s {
		case "Replacement":
		case "Migration":
			errs = append(errs, field.NotSupported(fldPath.Child("updateVolumesStrategy"), *s, []string{"Replacement"}))
		default:
			errs = append(errs, field.NotSupported(fldPath.Child("updateVolumesStrategy"), *s, []string{"Replacement", "Migration"}))
		}
	}
	return errs
}
