// Package migration is the registry of VirtualMachineInstanceMigrations: defaults, validation
// (also against the VMI and its other migrations),
// status separation, the spec.vmiName field selector and kubectl columns.
package migration

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachineInstanceMigrations to the generic registry. lookups lets
// creation check the VMI and the other migrations of it; its fields are filled in once the stores
// exist.
func Resource(lookups *Lookups) storeutil.Resource[*v1.VirtualMachineInstanceMigration] {
	return storeutil.Resource[*v1.VirtualMachineInstanceMigration]{
		Plural:     v1.Resource("virtualmachineinstancemigrations"),
		Singular:   v1.Resource("virtualmachineinstancemigration"),
		ShortNames: []string{"vmim", "vmims"},
		New:        func() runtime.Object { return &v1.VirtualMachineInstanceMigration{} },
		NewList:    func() runtime.Object { return &v1.VirtualMachineInstanceMigrationList{} },
		Hooks: storeutil.Hooks[*v1.VirtualMachineInstanceMigration]{
			APIVersion:       v1.SchemeGroupVersion.String(),
			PrepareForCreate: prepareForCreate,
			Validate: func(ctx context.Context, o *v1.VirtualMachineInstanceMigration) field.ErrorList {
				errs := validation.ValidateVirtualMachineInstanceMigration(o)
				if len(errs) > 0 {
					return errs
				}
				return lookups.validateTarget(ctx, o)
			},
			ValidateStatusUpdate: func(_ context.Context, o, old *v1.VirtualMachineInstanceMigration) field.ErrorList {
				return validation.ValidateVirtualMachineInstanceMigrationStatusUpdate(o, old)
			},
			ValidateUpdate: func(_ context.Context, o, old *v1.VirtualMachineInstanceMigration) field.ErrorList {
				return validation.ValidateVirtualMachineInstanceMigrationUpdate(o, old)
			},
			ResetStatus: func(o *v1.VirtualMachineInstanceMigration) {
				o.Status = v1.VirtualMachineInstanceMigrationStatus{}
			},
			CopyStatus: func(dst, src *v1.VirtualMachineInstanceMigration) { dst.Status = src.Status },
			CopySpec:   func(dst, src *v1.VirtualMachineInstanceMigration) { dst.Spec = src.Spec },
			Spec:       func(o *v1.VirtualMachineInstanceMigration) any { return o.Spec },
		},
		SelectableFields: v1.VirtualMachineInstanceMigrationFields,
		// KubeVirt's migration columns have no AGE.
		Table: storeutil.Table[*v1.VirtualMachineInstanceMigration]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.Column("Phase", "Phase of the migration.", 0),
				storeutil.Column("VMI", "Name of the migrated VirtualMachineInstance.", 0),
			},
			Cells: func(o *v1.VirtualMachineInstanceMigration, _ string) []any {
				return []any{storeutil.OrNil(string(o.Status.Phase)), storeutil.OrNil(o.Spec.VMIName)}
			},
		},
	}
}

func prepareForCreate(_ context.Context, o *v1.VirtualMachineInstanceMigration) {
	defaults.SetMigrationDefaults(o)
	o.Status.Phase = v1.MigrationPending
	o.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{
		{Phase: v1.MigrationPending, PhaseTransitionTimestamp: metav1.Now()},
	}
}
