// Package migration is the registry of VirtualMachineInstanceMigrations: validation,
// status separation, the spec.vmiName field selector and kubectl columns.
package migration

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachineInstanceMigrations to the generic registry.
func Resource() storeutil.Resource[*core.VirtualMachineInstanceMigration] {
	return storeutil.Resource[*core.VirtualMachineInstanceMigration]{
		Plural:     core.Resource("virtualmachineinstancemigrations"),
		Singular:   core.Resource("virtualmachineinstancemigration"),
		ShortNames: []string{"vmim", "vmims"},
		New:        func() runtime.Object { return &core.VirtualMachineInstanceMigration{} },
		NewList:    func() runtime.Object { return &core.VirtualMachineInstanceMigrationList{} },
		Hooks: storeutil.Hooks[*core.VirtualMachineInstanceMigration]{
			APIVersion:       "kubevirt.io/v1",
			PrepareForCreate: prepareForCreate,
			Validate: func(_ context.Context, o *core.VirtualMachineInstanceMigration) field.ErrorList {
				return validation.ValidateVirtualMachineInstanceMigration(o)
			},
			ValidateUpdate: func(_ context.Context, o, old *core.VirtualMachineInstanceMigration) field.ErrorList {
				return validation.ValidateVirtualMachineInstanceMigrationUpdate(o, old)
			},
			ResetStatus: func(o *core.VirtualMachineInstanceMigration) {
				o.Status = core.VirtualMachineInstanceMigrationStatus{}
			},
			CopyStatus: func(dst, src *core.VirtualMachineInstanceMigration) { dst.Status = src.Status },
			CopySpec:   func(dst, src *core.VirtualMachineInstanceMigration) { dst.Spec = src.Spec },
			Spec:       func(o *core.VirtualMachineInstanceMigration) any { return o.Spec },
		},
		SelectableFields: func(o *core.VirtualMachineInstanceMigration) fields.Set {
			return fields.Set{"spec.vmiName": o.Spec.VMIName, "status.phase": string(o.Status.Phase)}
		},
		// KubeVirt's migration columns have no AGE.
		Table: storeutil.Table[*core.VirtualMachineInstanceMigration]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.Column("Phase", "Phase of the migration.", 0),
				storeutil.Column("VMI", "Name of the migrated VirtualMachineInstance.", 0),
			},
			Cells: func(o *core.VirtualMachineInstanceMigration, _ string) []any {
				return []any{storeutil.OrNil(string(o.Status.Phase)), storeutil.OrNil(o.Spec.VMIName)}
			},
		},
	}
}

func prepareForCreate(_ context.Context, o *core.VirtualMachineInstanceMigration) {
	o.Status.Phase = core.MigrationPending
	o.Status.PhaseTransitionTimestamps = []core.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{
		{Phase: core.MigrationPending, PhaseTransitionTimestamp: metav1.Now()},
	}
}
