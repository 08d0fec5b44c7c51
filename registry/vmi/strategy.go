// Package vmi is the registry of VirtualMachineInstances: defaulting, validation,
// status separation, field selectors and kubectl columns.
package vmi

import (
	"context"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachineInstances to the generic registry.
func Resource() storeutil.Resource[*v1.VirtualMachineInstance] {
	return storeutil.Resource[*v1.VirtualMachineInstance]{
		Plural:     v1.Resource("virtualmachineinstances"),
		Singular:   v1.Resource("virtualmachineinstance"),
		ShortNames: []string{"vmi", "vmis"},
		New:        func() runtime.Object { return &v1.VirtualMachineInstance{} },
		NewList:    func() runtime.Object { return &v1.VirtualMachineInstanceList{} },
		Hooks: storeutil.Hooks[*v1.VirtualMachineInstance]{
			APIVersion:       v1.SchemeGroupVersion.String(),
			PrepareForCreate: func(_ context.Context, o *v1.VirtualMachineInstance) { PrepareForCreate(o) },
			PrepareForUpdate: func(_ context.Context, o, old *v1.VirtualMachineInstance) { PrepareForUpdate(o, old) },
			PrepareForStatusUpdate: func(_ context.Context, o, _ *v1.VirtualMachineInstance) {
				deriveNodeNameLabel(o)
			},
			Validate:             validate,
			ValidateUpdate:       validateUpdate,
			ValidateStatusUpdate: validateStatusUpdate,
			ResetStatus:          func(o *v1.VirtualMachineInstance) { o.Status = v1.VirtualMachineInstanceStatus{} },
			CopyStatus:           func(dst, src *v1.VirtualMachineInstance) { dst.Status = src.Status },
			CopySpec:             func(dst, src *v1.VirtualMachineInstance) { dst.Spec = src.Spec },
			Spec:                 func(o *v1.VirtualMachineInstance) any { return o.Spec },
		},
		SelectableFields: v1.VirtualMachineInstanceFields,
		// Each node agent watches the VMIs of its node: the watch cache indexes them by node
		// instead of testing every VMI event against every node agent's selector.
		IndexedFields: []string{"status.nodeName"},
		Table:         table,
	}
}

// PrepareForCreate is what a new VMI gets before validation: the foreground-delete
// finalizer, KubeVirt's defaults, and phase Pending with its first transition timestamp.
// (The CRD + webhook benchmark applies the same from its mutating webhook.)
func PrepareForCreate(o *v1.VirtualMachineInstance) {
	if !slices.Contains(o.Finalizers, v1.VirtualMachineInstanceFinalizer) {
		o.Finalizers = append(o.Finalizers, v1.VirtualMachineInstanceFinalizer)
	}
	defaults.SetVirtualMachineInstanceDefaults(o)
	o.Status.Phase = v1.Pending
	o.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstancePhaseTransitionTimestamp{
		{Phase: v1.Pending, PhaseTransitionTimestamp: metav1.Now()},
	}
}

// PrepareForUpdate defaults an updated VMI exactly as a new one, keeping the values the server
// chose at creation (the firmware UUID), so that re-applying an unchanged manifest, whose lists
// carry none of the defaults, compares equal to the stored spec instead of "changing" it. A VMI
// stored by an earlier version lacks the defaults added since: when the update defaults to what
// the stored spec defaults to, the stored spec is kept as it is, so metadata-only updates (labels,
// the controller releasing its finalizer) still succeed on such VMIs.
func PrepareForUpdate(o, old *v1.VirtualMachineInstance) {
	defaults.RetainVirtualMachineInstanceIdentity(o, old)
	defaults.SetVirtualMachineInstanceDefaults(o)
	stored := old.DeepCopy()
	defaults.SetVirtualMachineInstanceDefaults(stored)
	if apiequality.Semantic.DeepEqual(o.Spec, stored.Spec) {
		o.Spec = *old.Spec.DeepCopy()
	}
	deriveNodeNameLabel(o)
}

// deriveNodeNameLabel sets KubeVirt's kubevirt.io/nodeName label from status.nodeName, so
// `kubectl get vmi -l kubevirt.io/nodeName=NODE` works as with KubeVirt. The server derives it
// on every update (status already holds the stored or the new status), so it costs no write of
// its own and no client can make it disagree with the status.
func deriveNodeNameLabel(o *v1.VirtualMachineInstance) {
	setDerivedLabel(o, v1.MigrationTargetNodeNameLabel, migrationTargetOf(o))
	setDerivedLabel(o, v1.NodeNameLabel, o.Status.NodeName)
}

// setDerivedLabel sets label key to value, or removes it when value is empty. KubeVirt's
// kubevirt.io/migrationTargetNodeName names the node a VMI is migrating to, so the target's
// node agent can watch the VMIs coming to it.
func setDerivedLabel(o *v1.VirtualMachineInstance, key, value string) {
	node := value
	if node == "" {
		if _, ok := o.Labels[key]; ok {
			delete(o.Labels, key)
		}
		return
	}
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels[key] = node
}

func validate(ctx context.Context, o *v1.VirtualMachineInstance) field.ErrorList {
	errs := validation.ValidateVirtualMachineInstance(o)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, nil, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

func validateUpdate(ctx context.Context, o, old *v1.VirtualMachineInstance) field.ErrorList {
	errs := validation.ValidateVirtualMachineInstanceUpdate(o, old)
	errs = append(errs, validateNodeRestriction(ctx, o, old)...)
	if !storeutil.IsVireoComponent(ctx) {
		errs = append(errs, validation.ValidateReservedLabels(o.Labels, old.Labels, field.NewPath("metadata", "labels"))...)
	}
	return errs
}

func validateStatusUpdate(ctx context.Context, o, old *v1.VirtualMachineInstance) field.ErrorList {
	return append(validation.ValidateVirtualMachineInstanceStatusUpdate(o, old), validateNodeRestriction(ctx, o, old)...)
}
