package vmi

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// AllowPodBridgeMigrationAnnotation on a VMI lets it migrate with a bridge binding on the pod
// network (KubeVirt's; the guest's address changes with the Pod's).
const AllowPodBridgeMigrationAnnotation = "kubevirt.io/allow-pod-bridge-network-live-migration"

// claimModes returns the access modes of the claim in the VMI's namespace.
type claimModes func(ctx context.Context, claim string) ([]corev1.PersistentVolumeAccessMode, error)

// liveMigratable is KubeVirt's LiveMigratable condition of vmi. Disks of claims
// (persistentVolumeClaim and dataVolume volumes) must be shared, ReadWriteMany: both launchers
// use them during the migration. containerDisks, emptyDisks, cloud-init and other generated
// disks are copied with the migration. An interface bridged to the pod network cannot follow
// the guest to another Pod's address unless the VMI allows it.
func liveMigratable(ctx context.Context, vmi *v1.VirtualMachineInstance, modes claimModes) (v1.VirtualMachineInstanceCondition, error) {
	cond := v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceIsMigratable, Status: v1.ConditionTrue}
	for _, vol := range vmi.Spec.Volumes {
		claim := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim = vol.PersistentVolumeClaim.ClaimName
		case vol.DataVolume != nil:
			claim = vol.DataVolume.Name
		default:
			continue
		}
		got, err := modes(ctx, claim)
		if apierrors.IsNotFound(err) {
			cond.Status, cond.Reason = v1.ConditionFalse, v1.ReasonDisksNotLiveMigratable
			cond.Message = fmt.Sprintf("cannot migrate VMI: Unable to determine if PVC %s is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", claim)
			return cond, nil
		}
		if err != nil {
			return cond, err
		}
		if !slices.Contains(got, corev1.ReadWriteMany) {
			cond.Status, cond.Reason = v1.ConditionFalse, v1.ReasonDisksNotLiveMigratable
			cond.Message = fmt.Sprintf("cannot migrate VMI: PVC %s is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", claim)
			return cond, nil
		}
	}
	podNetworks := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		if n.Pod != nil {
			podNetworks[n.Name] = true
		}
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if iface.Bridge != nil && podNetworks[iface.Name] && vmi.Annotations[AllowPodBridgeMigrationAnnotation] != "true" {
			cond.Status, cond.Reason = v1.ConditionFalse, v1.ReasonInterfaceNotLiveMigratable
			cond.Message = "cannot migrate VMI which does not use masquerade, bridge with " + AllowPodBridgeMigrationAnnotation +
				" VM annotation or a migratable plugin to connect to the pod network"
			return cond, nil
		}
	}
	return cond, nil
}

// withLiveMigratable adds the LiveMigratable condition to a VMI's status once it is Scheduled
// (KubeVirt's node agent reports it for running VMIs); it is computed once, from the spec and
// the claims' access modes, which do not change.
func (c *Controller) withLiveMigratable(ctx context.Context, vmi *v1.VirtualMachineInstance, st *v1.VirtualMachineInstanceStatus, now metav1.Time) error {
	if st.Phase != v1.Scheduled && st.Phase != v1.Running {
		return nil
	}
	for _, cond := range st.Conditions {
		if cond.Type == v1.VirtualMachineInstanceIsMigratable {
			return nil
		}
	}
	cond, err := liveMigratable(ctx, vmi, func(ctx context.Context, claim string) ([]corev1.PersistentVolumeAccessMode, error) {
		pvc, err := c.kube.CoreV1().PersistentVolumeClaims(vmi.Namespace).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return pvc.Spec.AccessModes, nil
	})
	if err != nil {
		return err
	}
	st.SetCondition(cond, now)
	return nil
}
