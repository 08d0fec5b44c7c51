package vmi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// UnsupportedReason is the reason of a VMI that Vireo refused to start because it asks for
// something Vireo stores (KubeVirt's manifests carry it) but cannot run yet.
const UnsupportedReason = "Unsupported"

// unsupportedFields returns the paths of the fields of spec that Vireo accepts but cannot run yet.
// A VMI that sets any of them fails when it would start, with these paths in its reason, instead
// of running without them. A feature given as enabled: false counts too: Vireo cannot promise the
// machine type's setting is off either.
func unsupportedFields(spec *v1.VirtualMachineInstanceSpec) []string {
	var paths []string
	add := func(set bool, path string) {
		if set {
			paths = append(paths, path)
		}
	}
	d := &spec.Domain
	if d.CPU != nil {
		add(d.CPU.DedicatedCPUPlacement, "spec.domain.cpu.dedicatedCpuPlacement")
		add(d.CPU.IsolateEmulatorThread, "spec.domain.cpu.isolateEmulatorThread")
	}
	if f := d.Features; f != nil {
		add(f.Hyperv != nil, "spec.domain.features.hyperv")
	}
	add(d.Devices.TPM != nil, "spec.domain.devices.tpm")
	for i, disk := range d.Devices.Disks {
		add(disk.LUN != nil, fmt.Sprintf("spec.domain.devices.disks[%d].lun", i))
	}
	for i, vol := range spec.Volumes {
		add(vol.HostDisk != nil, fmt.Sprintf("spec.volumes[%d].hostDisk", i))
	}
	return paths
}

// refuseUnsupported fails a VMI that has not started yet and asks for what Vireo cannot run. It
// reports whether it did.
func (c *Controller) refuseUnsupported(ctx context.Context, vmi *v1.VirtualMachineInstance) (bool, error) {
	if vmi.DeletionTimestamp != nil || (vmi.Status.Phase != "" && vmi.Status.Phase != v1.Pending) {
		return false, nil
	}
	paths := unsupportedFields(&vmi.Spec)
	if len(paths) == 0 {
		return false, nil
	}
	message := "Vireo cannot run " + strings.Join(paths, ", ") + " yet; remove them from the VMI (or its VirtualMachine's template) and create it again"
	updated := vmi.DeepCopy()
	now := metav1.Now()
	updated.Status.Phase = v1.Failed
	updated.Status.Reason = UnsupportedReason
	updated.Status.PhaseTransitionTimestamps = append(updated.Status.PhaseTransitionTimestamps,
		v1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: v1.Failed, PhaseTransitionTimestamp: now})
	updated.Status.Conditions = slices.DeleteFunc(updated.Status.Conditions, func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Type == v1.VirtualMachineInstanceSynchronized
	})
	updated.Status.Conditions = append(updated.Status.Conditions, v1.VirtualMachineInstanceCondition{
		Type: v1.VirtualMachineInstanceSynchronized, Status: v1.ConditionFalse, LastTransitionTime: now,
		Reason: UnsupportedReason, Message: message,
	})
	_, err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err == nil {
		klog.FromContext(ctx).Info("Refused to start a VMI that asks for what Vireo cannot run", "vmi", klog.KObj(vmi), "fields", paths)
	}
	return true, err
}
