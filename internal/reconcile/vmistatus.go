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
// agents) can make. wrote says whether status was written. A VMI deleted meanwhile is not an
// error (and not written).
func WriteVMIStatus(ctx context.Context, client versioned.Interface, written *WrittenVersions, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) (wrote bool, err error) {
	if equality.Semantic.DeepEqual(vmi.Status, status) {
		return false, nil
	}
	updated := vmi.DeepCopy()
	updated.Status = status
	_, err = client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	written.Wrote(vmi.Namespace+"/"+vmi.Name, vmi.ResourceVersion)
	if status.Phase != vmi.Status.Phase {
		klog.FromContext(ctx).Info("VMI phase changed", "vmi", klog.KObj(vmi), "from", vmi.Status.Phase, "to", status.Phase, "reason", status.Reason)
	}
	return true, nil
}
