package vm

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// dataVolume is the DataVolume a VM's dataVolumeTemplate describes, owned by the VM.
func dataVolume(vm *v1.VirtualMachine, tmpl *v1.DataVolumeTemplateSpec) *cdiv1beta1.DataVolume {
	yes := true
	meta := *tmpl.ObjectMeta.DeepCopy()
	meta.Namespace = vm.Namespace
	meta.ResourceVersion, meta.UID, meta.CreationTimestamp = "", "", metav1.Time{}
	meta.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.SchemeGroupVersion.String(), Kind: "VirtualMachine",
		Name: vm.Name, UID: vm.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
	return &cdiv1beta1.DataVolume{ObjectMeta: meta, Spec: *tmpl.Spec.DeepCopy()}
}

// ensureDataVolumes creates the DataVolumes of vm's dataVolumeTemplates that do not exist yet.
// One of that name that the VM does not own is an error (it is not taken over).
func (c *Controller) ensureDataVolumes(ctx context.Context, vm *v1.VirtualMachine) error {
	for i := range vm.Spec.DataVolumeTemplates {
		tmpl := &vm.Spec.DataVolumeTemplates[i]
		existing, err := c.dvs.DataVolumes(vm.Namespace).Get(tmpl.ObjectMeta.Name)
		if err == nil {
			if !metav1.IsControlledBy(existing, vm) {
				return fmt.Errorf("DataVolume %s/%s exists and does not belong to this VM", vm.Namespace, tmpl.ObjectMeta.Name)
			}
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		created, err := c.client.CdiV1beta1().DataVolumes(vm.Namespace).Create(ctx, dataVolume(vm, tmpl), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			// Made by an earlier sync the cache has not seen yet.
		case err != nil:
			return fmt.Errorf("creating DataVolume %s: %w", tmpl.ObjectMeta.Name, err)
		default:
			klog.FromContext(ctx).Info("Created the VM's DataVolume", "vm", klog.KObj(vm), "dataVolume", created.Name)
		}
	}
	return nil
}
