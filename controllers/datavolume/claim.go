package datavolume

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
)

// DefaultFilesystemOverhead is the share of a Filesystem volume that the file system itself
// takes, as CDI assumes it (5.5 %): the disk image gets the rest.
const DefaultFilesystemOverhead = 0.055

// alignment is the unit disk images are sized in (CDI rounds usable space down to 1 MiB).
const alignment = 1 << 20

// DataVolumeLabel on a claim or an importer Pod names the DataVolume it belongs to (when the name
// fits a label value; the owner reference is authoritative).
const DataVolumeLabel = "cdi.kubevirt.io/dataVolume"

// Claim renders the PersistentVolumeClaim of dv: named after it and owned by it. With spec.pvc
// the claim is exactly as given; with spec.storage, unset access modes default to
// ReadWriteOnce and, for a Filesystem volume, the size is raised by the file system's overhead so
// the disk image gets the size asked for (CDI's rule). A clone that gives no size gets the
// source claim's, sourceSize (0 when there is no source claim).
func Claim(dv *cdiv1beta1.DataVolume, overhead float64, sourceSize resource.Quantity) (*corev1.PersistentVolumeClaim, error) {
	var modes []cdiv1beta1.PersistentVolumeAccessMode
	var requests cdiv1beta1.ResourceList
	var class *string
	var mode *cdiv1beta1.PersistentVolumeMode
	switch {
	case dv.Spec.PVC != nil:
		p := dv.Spec.PVC
		modes, requests, class, mode = p.AccessModes, p.Resources.Requests, p.StorageClassName, p.VolumeMode
	case dv.Spec.Storage != nil:
		s := dv.Spec.Storage
		modes, requests, class, mode = s.AccessModes, s.Resources.Requests, s.StorageClassName, s.VolumeMode
	default:
		return nil, fmt.Errorf("DataVolume %s/%s has neither spec.storage nor spec.pvc", dv.Namespace, dv.Name)
	}
	size, ok := requests[cdiv1beta1.ResourceStorage]
	sized := ok && size.Sign() > 0
	if !sized && sourceSize.Sign() > 0 {
		size = sourceSize // the source's claim already has room for its file system
	} else if !sized {
		return nil, fmt.Errorf("DataVolume %s/%s asks for no storage size", dv.Namespace, dv.Name)
	}
	block := mode != nil && *mode == cdiv1beta1.PersistentVolumeBlock
	if dv.Spec.Storage != nil {
		if len(modes) == 0 {
			modes = []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce}
		}
		if !block && sized {
			size = *resource.NewQuantity(RequiredSpace(size.Value(), overhead), resource.BinarySI)
		}
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: dv.Name, Namespace: dv.Namespace, Labels: ownLabels(dv),
			OwnerReferences: []metav1.OwnerReference{ownerReference(dv)},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	for _, m := range modes {
		pvc.Spec.AccessModes = append(pvc.Spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
	}
	if mode != nil {
		vm := corev1.PersistentVolumeMode(*mode)
		pvc.Spec.VolumeMode = &vm
	}
	return pvc, nil
}

// RequiredSpace is the volume size a disk image of size bytes needs on a file system that takes
// overhead of it, aligned up to 1 MiB.
func RequiredSpace(size int64, overhead float64) int64 {
	need := int64(math.Ceil(float64(size) / (1 - overhead)))
	return (need + alignment - 1) / alignment * alignment
}

// ownerReference makes dv the controller of an object.
func ownerReference(dv *cdiv1beta1.DataVolume) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: cdiv1beta1.SchemeGroupVersion.String(), Kind: "DataVolume", Name: dv.Name, UID: dv.UID,
		Controller: &yes, BlockOwnerDeletion: &yes}
}

// ManagedByLabel with value ManagedBy marks the claims and importer Pods the controller made
// (its informers watch only those).
const ManagedByLabel, ManagedBy = "app.kubernetes.io/managed-by", "vireo-controller"

// ownLabels are the labels of dv's claim and importer Pod.
func ownLabels(dv *cdiv1beta1.DataVolume) map[string]string {
	labels := map[string]string{ManagedByLabel: ManagedBy}
	if len(dv.Name) <= 63 {
		labels[DataVolumeLabel] = dv.Name
	}
	return labels
}
