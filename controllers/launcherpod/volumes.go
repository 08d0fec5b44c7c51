package launcherpod

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// diskMounts are the Pod volumes and container mounts of a VMI's PVC and DataVolume disks.
type diskMounts struct {
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

// DiskPath is where the launcher finds the disk of a PVC or DataVolume volume: the disk.img in
// the directory the volume is mounted at (KubeVirt's convention for filesystem volumes).
func DiskPath(volumeName string) string {
	return path.Join(protocol.ClaimsDir, volumeName, "disk.img")
}

// diskVolumes mounts each persistentVolumeClaim and dataVolume volume of the VMI (a DataVolume's
// PVC has the DataVolume's name) at protocol.ClaimsDir/<volume name>. Volume names are DNS-1123 labels,
// checked again here because they become path components.
func diskVolumes(volumes []v1.Volume, path *field.Path) (diskMounts, field.ErrorList) {
	var out diskMounts
	var errs field.ErrorList
	for i, vol := range volumes {
		claim, readOnly := "", false
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim, readOnly = vol.PersistentVolumeClaim.ClaimName, vol.PersistentVolumeClaim.ReadOnly
		case vol.DataVolume != nil:
			claim = vol.DataVolume.Name
		default:
			continue
		}
		if msgs := validation.IsDNS1123Label(vol.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), vol.Name, msgs[0]))
			continue
		}
		if claim == "" {
			errs = append(errs, field.Required(path.Index(i), "the claim (or DataVolume) name"))
			continue
		}
		podVolume := "disk-" + vol.Name
		if len(podVolume) > validation.DNS1123LabelMaxLength {
			podVolume = "disk-" + launcherpodapi.NameSuffix(vol.Name)
		}
		out.volumes = append(out.volumes, corev1.Volume{Name: podVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}})
		out.mounts = append(out.mounts, corev1.VolumeMount{Name: podVolume, MountPath: protocol.ClaimsDir + "/" + vol.Name, ReadOnly: readOnly})
	}
	return out, errs
}
