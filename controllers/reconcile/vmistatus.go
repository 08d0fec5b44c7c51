package reconcile

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// WriteVMIStatus writes status through vmi's /status when it differs from vmi's, and records
// the write in written: the fewest writes the VMI's controllers (vireo-controller and the node
// agents) can make. A VMI deleted meanwhile is not an error.
func WriteVMIStatus(ctx context.Context, client versioned.Interface, written *WrittenVersions, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) error {
	if equality.Semantic.DeepEqual(vmi.Status, status) {
		return nil
	}
	updated := vmi.DeepCopy()
	updated.Status = status
	_, err := client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	written.Wrote(vmi.Namespace+"/"+vmi.Name, vmi.ResourceVersion)
	if status.Phase != vmi.Status.Phase {
		klog.FromContext(ctx).Info("VMI phase changed", "vmi", klog.KObj(vmi), "from", vmi.Status.Phase, "to", status.Phase, "reason", status.Reason)
	}
	return nil
}
