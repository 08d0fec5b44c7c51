// Package vm is the registry of VirtualMachines: defaulting, validation, status
// separation and kubectl columns.
package vm

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/datavolume"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachines to the generic registry; clones checks the users whose
// dataVolumeTemplates clone across namespaces; sizes finds the instancetypes and preferences VMs
// name (or infer from their volumes), whose values must not conflict with the VM's.
func Resource(clones datavolume.CloneSources, sizes Sizes) storeutil.Resource[*v1.VirtualMachine] {
	return storeutil.Resource[*v1.VirtualMachine]{
		Plural:     v1.Resource("virtualmachines"),
		Singular:   v1.Resource("virtualmachine"),
		ShortNames: []string{"vm", "vms"},
		New:        func() runtime.Object { return &v1.VirtualMachine{} },
		NewList:    func() runtime.Object { return &v1.VirtualMachineList{} },
		Hooks: storeutil.Hooks[*v1.VirtualMachine]{
			APIVersion: v1.SchemeGroupVersion.String(),
			PrepareForCreate: func(ctx context.Context, o *v1.VirtualMachine) {
				sizes.prepare(ctx, o)
				defaults.SetVirtualMachineDefaults(o)
				defaults.SetVirtualMachineIdentity(o)
			},
			PrepareForUpdate: func(ctx context.Context, o, old *v1.VirtualMachine) {
				sizes.prepare(ctx, o)
				defaults.SetVirtualMachineDefaults(o)
				defaults.RetainVirtualMachineIdentity(o, old)
			},
			Validate: func(ctx context.Context, o *v1.VirtualMachine) field.ErrorList {
				errs := append(validate(ctx, o), checkCloneSources(ctx, clones, o, nil)...)
				return append(errs, sizes.check(ctx, o)...)
			},
			ValidateStatusUpdate: func(_ context.Context, o, old *v1.VirtualMachine) field.ErrorList {
				return validation.ValidateVirtualMachineStatusUpdate(o, old)
			},
			ValidateUpdate: func(ctx context.Context, o, old *v1.VirtualMachine) field.ErrorList {
				errs := append(validateUpdate(ctx, o, old), checkCloneSources(ctx, clones, o, old)...)
				return append(errs, sizes.check(ctx, o)...)
			},
			ResetStatus: func(o *v1.VirtualMachine) { o.Status = v1.VirtualMachineStatus{} },
			CopyStatus:  func(dst, src *v1.VirtualMachine) { dst.Status = src.Status },
			CopySpec:    func(dst, src *v1.VirtualMachine) { dst.Spec = src.Spec },
			Spec:        func(o *v1.VirtualMachine) any { return o.Spec },
			Warnings:    warnings,
		},
		SelectableFields: v1.VirtualMachineFields,
		Table: storeutil.Table[*v1.VirtualMachine]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.AgeColumn,
				storeutil.Column("Status", "Human-readable status of the virtual machine.", 0),
				storeutil.Column("Ready", "Status of the Ready condition.", 0),
			},
			Cells: func(o *v1.VirtualMachine, age string) []any {
				return []any{age, storeutil.OrNil(string(o.Status.PrintableStatus)), storeutil.OrNil(readyStatus(o))}
			},
		},
	}
}

// RunningDeprecated is KubeVirt's warning for a VM that uses spec.running.
const RunningDeprecated = "spec.running is deprecated, please use spec.runStrategy instead."

// warnings tells users of spec.running that it is deprecated, as KubeVirt does.
func warnings(o *v1.VirtualMachine) []string {
	if o.Spec.Running != nil {
		return []string{RunningDeprecated}
	}
	return nil
}

func validate(ctx context.Context, o *v1.VirtualMachine) field.ErrorList {
	errs := validation.ValidateVirtualMachine(o)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, nil, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

func validateUpdate(ctx context.Context, o, old *v1.VirtualMachine) field.ErrorList {
	errs := validation.ValidateVirtualMachineUpdate(o, old)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, old.Labels, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

// checkCloneSources asks whether the user may clone what o's dataVolumeTemplates clone from
// other namespaces; on an update, only when the templates changed.
func checkCloneSources(ctx context.Context, clones datavolume.CloneSources, o, old *v1.VirtualMachine) field.ErrorList {
	if old != nil && equality.Semantic.DeepEqual(o.Spec.DataVolumeTemplates, old.Spec.DataVolumeTemplates) {
		return nil
	}
	var errs field.ErrorList
	for i := range o.Spec.DataVolumeTemplates {
		path := field.NewPath("spec", "dataVolumeTemplates").Index(i).Child("spec")
		errs = append(errs, clones.Check(ctx, o.Namespace, &o.Spec.DataVolumeTemplates[i].Spec, path)...)
	}
	return errs
}

func readyStatus(o *v1.VirtualMachine) string {
	for _, c := range o.Status.Conditions {
		if c.Type == v1.VirtualMachineReady {
			return string(c.Status)
		}
	}
	return ""
}
