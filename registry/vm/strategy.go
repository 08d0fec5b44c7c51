// Package vm is the registry of VirtualMachines: defaulting, validation, status
// separation and kubectl columns.
package vm

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core"
	"github.com/vireo-dev/vireo/apis/core/defaults"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachines to the generic registry.
func Resource() storeutil.Resource[*core.VirtualMachine] {
	return storeutil.Resource[*core.VirtualMachine]{
		Plural:     core.Resource("virtualmachines"),
		Singular:   core.Resource("virtualmachine"),
		ShortNames: []string{"vm", "vms"},
		New:        func() runtime.Object { return &core.VirtualMachine{} },
		NewList:    func() runtime.Object { return &core.VirtualMachineList{} },
		Hooks: storeutil.Hooks[*core.VirtualMachine]{
			APIVersion:       "kubevirt.io/v1",
			PrepareForCreate: func(_ context.Context, o *core.VirtualMachine) { defaults.SetVirtualMachineDefaults(o) },
			PrepareForUpdate: func(_ context.Context, o, _ *core.VirtualMachine) { defaults.SetVirtualMachineDefaults(o) },
			Validate:         validate,
			ValidateUpdate:   validateUpdate,
			ResetStatus:      func(o *core.VirtualMachine) { o.Status = core.VirtualMachineStatus{} },
			CopyStatus:       func(dst, src *core.VirtualMachine) { dst.Status = src.Status },
			CopySpec:         func(dst, src *core.VirtualMachine) { dst.Spec = src.Spec },
			Spec:             func(o *core.VirtualMachine) any { return o.Spec },
		},
		SelectableFields: func(o *core.VirtualMachine) fields.Set {
			return fields.Set{"status.printableStatus": string(o.Status.PrintableStatus)}
		},
		Table: storeutil.Table[*core.VirtualMachine]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.AgeColumn,
				storeutil.Column("Status", "Human-readable status of the virtual machine.", 0),
				storeutil.Column("Ready", "Status of the Ready condition.", 0),
			},
			Cells: func(o *core.VirtualMachine, age string) []any {
				return []any{age, storeutil.OrNil(string(o.Status.PrintableStatus)), storeutil.OrNil(readyStatus(o))}
			},
		},
	}
}

func validate(ctx context.Context, o *core.VirtualMachine) field.ErrorList {
	errs := validation.ValidateVirtualMachine(o)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, nil, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

func validateUpdate(ctx context.Context, o, old *core.VirtualMachine) field.ErrorList {
	errs := validation.ValidateVirtualMachineUpdate(o, old)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, old.Labels, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

func readyStatus(o *core.VirtualMachine) string {
	for _, c := range o.Status.Conditions {
		if c.Type == core.VirtualMachineReady {
			return string(c.Status)
		}
	}
	return ""
}
