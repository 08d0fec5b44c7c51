package migration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Lookups are the stores a new migration is checked against: the VMI it names must exist and not
// have ended, must not be known to be unmigratable, and must have no other migration in flight
// (KubeVirt's migration admission rules). As in KubeVirt, two migrations created at the same
// instant can both pass; the migration controller runs one at a time per VMI.
type Lookups struct {
	// VMIs reads VirtualMachineInstances.
	VMIs rest.Getter
	// Migrations lists VirtualMachineInstanceMigrations.
	Migrations rest.Lister
}

// validateTarget checks the VMI a new migration names, in the request's namespace.
func (l *Lookups) validateTarget(ctx context.Context, m *v1.VirtualMachineInstanceMigration) field.ErrorList {
	path := field.NewPath("spec", "vmiName")
	if l == nil || l.VMIs == nil || l.Migrations == nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("migration admission is not wired to the VMI store"))}
	}
	obj, err := l.VMIs.Get(ctx, m.Spec.VMIName, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return field.ErrorList{field.NotFound(path, m.Spec.VMIName)}
	}
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("unexpected object %T from the VMI store", obj))}
	}
	if vmi.Status.Phase == v1.Succeeded || vmi.Status.Phase == v1.Failed {
		return field.ErrorList{field.Invalid(path, m.Spec.VMIName,
			fmt.Sprintf("the VMI has ended (phase %s) and cannot be migrated", vmi.Status.Phase))}
	}
	for _, c := range vmi.Status.Conditions {
		if c.Type == v1.VirtualMachineInstanceIsMigratable && c.Status == v1.ConditionFalse {
			return field.ErrorList{field.Invalid(path, m.Spec.VMIName,
				fmt.Sprintf("the VMI cannot be live-migrated: %s: %s", c.Reason, c.Message))}
		}
	}
	return l.validateNoneInFlight(ctx, m, path)
}

// validateNoneInFlight refuses a migration while another one of the same VMI has not ended.
func (l *Lookups) validateNoneInFlight(ctx context.Context, m *v1.VirtualMachineInstanceMigration, path *field.Path) field.ErrorList {
	// By spec.vmiName, not by the kubevirt.io/vmi-name label: users may edit labels.
	sel := fields.OneTermEqualSelector("spec.vmiName", m.Spec.VMIName)
	obj, err := l.Migrations.List(ctx, &metainternalversion.ListOptions{FieldSelector: sel})
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	list, ok := obj.(*v1.VirtualMachineInstanceMigrationList)
	if !ok {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("unexpected list %T from the migration store", obj))}
	}
	for _, other := range list.Items {
		if other.Spec.VMIName != m.Spec.VMIName || other.Status.Phase == v1.MigrationSucceeded || other.Status.Phase == v1.MigrationFailed {
			continue
		}
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"migration %s of VMI %s is still in flight (phase %s); wait for it to end or delete it to abort it",
			other.Name, m.Spec.VMIName, orPending(other.Status.Phase)))}
	}
	return nil
}

func orPending(p v1.VirtualMachineInstanceMigrationPhase) v1.VirtualMachineInstanceMigrationPhase {
	if p == "" {
		return v1.MigrationPending
	}
	return p
}
