package vmi

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// dataVolumeGate says whether every DataVolume the VMI's volumes name has been populated
// (Succeeded, or waiting for its first consumer: the launcher Pod is that consumer), as the
// DataVolumesReady condition to set. get looks a DataVolume up by name in the VMI's namespace.
// A VMI without dataVolume volumes needs no condition (nil).
func dataVolumeGate(vmi *v1.VirtualMachineInstance, get func(name string) (*cdiv1beta1.DataVolume, error)) (*v1.VirtualMachineInstanceCondition, error) {
	var waiting, failed, missing []string
	any := false
	for _, vol := range vmi.Spec.Volumes {
		if vol.DataVolume == nil {
			continue
		}
		any = true
		dv, err := get(vol.DataVolume.Name)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, vol.DataVolume.Name)
		case err != nil:
			return nil, err
		case dv.Status.Phase == cdiv1beta1.Failed:
			failed = append(failed, fmt.Sprintf("%s (%s)", dv.Name, dataVolumeProblem(dv)))
		case dv.Status.Phase != cdiv1beta1.Succeeded && dv.Status.Phase != cdiv1beta1.WaitForFirstConsumer:
			waiting = append(waiting, fmt.Sprintf("%s (%s %s)", dv.Name, orUnknown(string(dv.Status.Phase)), dv.Status.Progress))
		}
	}
	if !any {
		return nil, nil
	}
	c := &v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceDataVolumesReady, Status: v1.ConditionFalse}
	switch {
	case len(failed) > 0:
		c.Reason, c.Message = v1.ReasonDataVolumeFailed, "DataVolume failed: "+strings.Join(failed, ", ")
	case len(missing) > 0:
		c.Reason, c.Message = v1.ReasonDataVolumeNotFound, "DataVolume not found: "+strings.Join(missing, ", ")
	case len(waiting) > 0:
		c.Reason, c.Message = v1.ReasonDataVolumeNotReady, "waiting for DataVolume: "+strings.Join(waiting, ", ")
	default:
		c.Status, c.Reason, c.Message = v1.ConditionTrue, v1.ReasonAllDataVolumesReady, ""
	}
	return c, nil
}

// dataVolumeProblem is what a failed DataVolume's conditions say.
func dataVolumeProblem(dv *cdiv1beta1.DataVolume) string {
	for _, c := range dv.Status.Conditions {
		if c.Type == cdiv1beta1.DataVolumeRunning && c.Message != "" {
			return c.Message
		}
	}
	return "Failed"
}

func orUnknown(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}

// withDataVolumes sets the gate's condition (and Provisioning while it is False) on a status.
func withDataVolumes(st *v1.VirtualMachineInstanceStatus, gate *v1.VirtualMachineInstanceCondition, now metav1.Time) {
	if gate == nil {
		return
	}
	st.SetCondition(*gate, now)
	provisioning := v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceProvisioning, Status: v1.ConditionFalse}
	if gate.Status == v1.ConditionFalse && gate.Reason != v1.ReasonDataVolumeFailed {
		provisioning.Status, provisioning.Reason, provisioning.Message = v1.ConditionTrue, gate.Reason, gate.Message
	}
	st.SetCondition(provisioning, now)
}
