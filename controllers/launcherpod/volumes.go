package launcherpod

import (
	"crypto/sha256"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// suffixAlphabet is the alphabet of Kubernetes' generated name suffixes (no vowels, no
// look-alike characters), so a launcher Pod's name looks as it does under KubeVirt.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodName is the launcher Pod's name for a VMI: virt-launcher-<vmi name>-<5 characters> as
// KubeVirt's generated names, but with the suffix derived from salt (the VMI's UID for its first
// launcher, a migration's UID for a migration target). The name is deterministic, so a create
// retried after a lost response or from a stale cache finds the Pod it made instead of making a
// second one.
func PodName(vmiName, salt string) string {
	suffix := nameSuffix(salt)
	maxName := validation.DNS1123SubdomainMaxLength - len(NamePrefix) - len(suffix) - 1
	if len(vmiName) > maxName {
		vmiName = vmiName[:maxName]
	}
	return NamePrefix + vmiName + "-" + suffix
}

// nameSuffix is 5 characters of suffixAlphabet derived from salt.
func nameSuffix(salt string) string {
	sum := sha256.Sum256([]byte(salt))
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = suffixAlphabet[int(sum[i])%len(suffixAlphabet)]
	}
	return string(suffix)
}

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
			podVolume = "disk-" + nameSuffix(vol.Name)
		}
		out.volumes = append(out.volumes, corev1.Volume{Name: podVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}})
		out.mounts = append(out.mounts, corev1.VolumeMount{Name: podVolume, MountPath: protocol.ClaimsDir + "/" + vol.Name, ReadOnly: readOnly})
	}
	return out, errs
}
