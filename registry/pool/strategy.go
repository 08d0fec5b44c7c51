// Package pool is the registry of VirtualMachinePools (pool.kubevirt.io/v1beta1 and v1alpha1):
// defaulting, validation (with the clone permissions of the template's DataVolumes), status
// separation, the /scale subresource and kubectl columns.
package pool

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	corevalidation "github.com/vireo-dev/vireo/apis/core/validation"
	poolinstall "github.com/vireo-dev/vireo/apis/pool/install"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
	"github.com/vireo-dev/vireo/apis/pool/validation"
	"github.com/vireo-dev/vireo/registry/datavolume"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes VirtualMachinePools to the generic registry; clones checks the users whose
// template's dataVolumeTemplates clone across namespaces (the pool's controller creates the VMs,
// so the check is made here, with the user's identity).
func Resource(clones datavolume.CloneSources) storeutil.Resource[*v1beta1.VirtualMachinePool] {
	return storeutil.Resource[*v1beta1.VirtualMachinePool]{
		Plural:     v1beta1.Resource("virtualmachinepools"),
		Singular:   v1beta1.Resource("virtualmachinepool"),
		ShortNames: []string{"vmpool", "vmpools"},
		New:        func() runtime.Object { return &v1beta1.VirtualMachinePool{} },
		NewList:    func() runtime.Object { return &v1beta1.VirtualMachinePoolList{} },
		Hooks: storeutil.Hooks[*v1beta1.VirtualMachinePool]{
			APIVersion:       v1beta1.SchemeGroupVersion.String(),
			PrepareForCreate: func(_ context.Context, o *v1beta1.VirtualMachinePool) { setDefaults(o) },
			PrepareForUpdate: func(_ context.Context, o, _ *v1beta1.VirtualMachinePool) { setDefaults(o) },
			Validate: func(ctx context.Context, o *v1beta1.VirtualMachinePool) field.ErrorList {
				return append(validation.ValidateVirtualMachinePool(o), checks(ctx, clones, o, nil)...)
			},
			ValidateUpdate: func(ctx context.Context, o, old *v1beta1.VirtualMachinePool) field.ErrorList {
				return append(validation.ValidateVirtualMachinePoolUpdate(o, old), checks(ctx, clones, o, old)...)
			},
			ResetStatus: func(o *v1beta1.VirtualMachinePool) { o.Status = corev1.VirtualMachineInstanceReplicaSetStatus{} },
			CopyStatus:  func(dst, src *v1beta1.VirtualMachinePool) { dst.Status = src.Status },
			CopySpec:    func(dst, src *v1beta1.VirtualMachinePool) { dst.Spec = src.Spec },
			Spec:        func(o *v1beta1.VirtualMachinePool) any { return o.Spec },
		},
		Table: storeutil.Table[*v1beta1.VirtualMachinePool]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.IntegerColumn("Desired", "Number of VMs wanted."),
				storeutil.IntegerColumn("Current", "Number of VMs that are not being deleted."),
				storeutil.IntegerColumn("Ready", "Number of ready VMs."),
				storeutil.AgeColumn,
			},
			Cells: func(o *v1beta1.VirtualMachinePool, age string) []any {
				var desired any
				if o.Spec.Replicas != nil {
					desired = int64(*o.Spec.Replicas)
				}
				return []any{desired, int64(o.Status.Replicas), int64(o.Status.ReadyReplicas), age}
			},
		},
	}
}

// Replicas reads and writes a pool's replicas for its /scale subresource.
var Replicas = storeutil.Replicas[*v1beta1.VirtualMachinePool]{
	Spec: func(o *v1beta1.VirtualMachinePool) int32 {
		if o.Spec.Replicas == nil {
			return 1
		}
		return *o.Spec.Replicas
	},
	SetSpec: func(o *v1beta1.VirtualMachinePool, n int32) { o.Spec.Replicas = &n },
	Status: func(o *v1beta1.VirtualMachinePool) (int32, string) {
		return o.Status.Replicas, o.Status.LabelSelector
	},
	Versions: []string{v1beta1.SchemeGroupVersion.String(), poolinstall.V1alpha1.String()},
}

// setDefaults gives a pool one replica when unset and its template a VM's defaults.
func setDefaults(o *v1beta1.VirtualMachinePool) {
	if o.Spec.Replicas == nil {
		o.Spec.Replicas = new(int32(1))
	}
	if t := o.Spec.VirtualMachineTemplate; t != nil {
		vm := &corev1.VirtualMachine{Spec: t.Spec}
		defaults.SetVirtualMachineDefaults(vm)
		t.Spec = vm.Spec
	}
}

// checks are the checks made with the user's identity: the reserved labels of the VMs and
// VMIs the pool makes, and the clone permissions of its DataVolume templates.
func checks(ctx context.Context, clones datavolume.CloneSources, o, old *v1beta1.VirtualMachinePool) field.ErrorList {
	t := o.Spec.VirtualMachineTemplate
	if t == nil || storeutil.IsVireoComponent(ctx) {
		return nil
	}
	var oldT *v1beta1.VirtualMachineTemplateSpec
	if old != nil {
		oldT = old.Spec.VirtualMachineTemplate
	}
	tPath := field.NewPath("spec", "virtualMachineTemplate")
	var oldLabels, oldVMILabels map[string]string
	var oldDVs []corev1.DataVolumeTemplateSpec
	if oldT != nil {
		oldLabels, oldDVs = oldT.ObjectMeta.Labels, oldT.Spec.DataVolumeTemplates
		if oldT.Spec.Template != nil {
			oldVMILabels = oldT.Spec.Template.ObjectMeta.Labels
		}
	}
	errs := corevalidation.ValidateReservedLabels(t.ObjectMeta.Labels, oldLabels, tPath.Child("metadata", "labels"))
	if t.Spec.Template != nil {
		errs = append(errs, corevalidation.ValidateReservedLabels(t.Spec.Template.ObjectMeta.Labels, oldVMILabels,
			tPath.Child("spec", "template", "metadata", "labels"))...)
	}
	if oldT != nil && equality.Semantic.DeepEqual(t.Spec.DataVolumeTemplates, oldDVs) {
		return errs
	}
	for i := range t.Spec.DataVolumeTemplates {
		path := tPath.Child("spec", "dataVolumeTemplates").Index(i).Child("spec")
		errs = append(errs, clones.Check(ctx, o.Namespace, &t.Spec.DataVolumeTemplates[i].Spec, path)...)
	}
	return errs
}
