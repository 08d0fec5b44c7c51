// Package replicaset is the registry of VirtualMachineInstanceReplicaSets: defaulting,
// validation, status separation, the /scale subresource and kubectl columns.
package replicaset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	coreinstall "github.com/vireo-dev/vireo/apis/core/install"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachineInstanceReplicaSets to the generic registry.
func Resource() storeutil.Resource[*v1.VirtualMachineInstanceReplicaSet] {
	return storeutil.Resource[*v1.VirtualMachineInstanceReplicaSet]{
		Plural:     v1.Resource("virtualmachineinstancereplicasets"),
		Singular:   v1.Resource("virtualmachineinstancereplicaset"),
		ShortNames: []string{"vmirs", "vmirss"},
		New:        func() runtime.Object { return &v1.VirtualMachineInstanceReplicaSet{} },
		NewList:    func() runtime.Object { return &v1.VirtualMachineInstanceReplicaSetList{} },
		Hooks: storeutil.Hooks[*v1.VirtualMachineInstanceReplicaSet]{
			APIVersion: v1.SchemeGroupVersion.String(),
			PrepareForCreate: func(_ context.Context, o *v1.VirtualMachineInstanceReplicaSet) {
				defaults.SetReplicaSetDefaults(o)
			},
			PrepareForUpdate: func(_ context.Context, o, _ *v1.VirtualMachineInstanceReplicaSet) {
				defaults.SetReplicaSetDefaults(o)
			},
			Validate: func(ctx context.Context, o *v1.VirtualMachineInstanceReplicaSet) field.ErrorList {
				return append(validation.ValidateVirtualMachineInstanceReplicaSet(o), reservedLabels(ctx, o, nil)...)
			},
			ValidateUpdate: func(ctx context.Context, o, old *v1.VirtualMachineInstanceReplicaSet) field.ErrorList {
				return append(validation.ValidateVirtualMachineInstanceReplicaSetUpdate(o, old), reservedLabels(ctx, o, old)...)
			},
			ResetStatus: func(o *v1.VirtualMachineInstanceReplicaSet) { o.Status = v1.VirtualMachineInstanceReplicaSetStatus{} },
			CopyStatus:  func(dst, src *v1.VirtualMachineInstanceReplicaSet) { dst.Status = src.Status },
			CopySpec:    func(dst, src *v1.VirtualMachineInstanceReplicaSet) { dst.Spec = src.Spec },
			Spec:        func(o *v1.VirtualMachineInstanceReplicaSet) any { return o.Spec },
		},
		Table: storeutil.Table[*v1.VirtualMachineInstanceReplicaSet]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.IntegerColumn("Desired", "Number of replicas wanted."),
				storeutil.IntegerColumn("Current", "Number of replicas that are neither finished nor being deleted."),
				storeutil.IntegerColumn("Ready", "Number of ready replicas."),
				storeutil.AgeColumn,
			},
			Cells: func(o *v1.VirtualMachineInstanceReplicaSet, age string) []any {
				return []any{replicasCell(o.Spec.Replicas), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas), age}
			},
		},
	}
}

// Replicas reads and writes a replica set's replicas for its /scale subresource.
var Replicas = storeutil.Replicas[*v1.VirtualMachineInstanceReplicaSet]{
	Spec: func(o *v1.VirtualMachineInstanceReplicaSet) int32 {
		if o.Spec.Replicas == nil {
			return 1
		}
		return *o.Spec.Replicas
	},
	SetSpec: func(o *v1.VirtualMachineInstanceReplicaSet, n int32) { o.Spec.Replicas = &n },
	Status: func(o *v1.VirtualMachineInstanceReplicaSet) (int32, string) {
		return o.Status.Replicas, o.Status.LabelSelector
	},
	Versions: []string{v1.SchemeGroupVersion.String(), coreinstall.V1alpha3.String()},
}

// replicasCell is the DESIRED column: spec.replicas, or nothing when unset.
func replicasCell(n *int32) any {
	if n == nil {
		return nil
	}
	return int64(*n)
}

// reservedLabels keeps users from giving the VMIs a replica set creates the labels Vireo's
// components track VMIs by (the controller creates them, so the VMIs' own check would pass).
func reservedLabels(ctx context.Context, o, old *v1.VirtualMachineInstanceReplicaSet) field.ErrorList {
	if storeutil.IsVireoComponent(ctx) {
		return nil
	}
	errs := validation.ValidateReservedLabels(o.Labels, oldLabels(old, false), field.NewPath("metadata", "labels"))
	if o.Spec.Template == nil {
		return errs
	}
	return append(errs, validation.ValidateReservedLabels(o.Spec.Template.ObjectMeta.Labels, oldLabels(old, true),
		field.NewPath("spec", "template", "metadata", "labels"))...)
}

func oldLabels(old *v1.VirtualMachineInstanceReplicaSet, template bool) map[string]string {
	switch {
	case old == nil:
		return nil
	case !template:
		return old.Labels
	case old.Spec.Template == nil:
		return nil
	default:
		return old.Spec.Template.ObjectMeta.Labels
	}
}
