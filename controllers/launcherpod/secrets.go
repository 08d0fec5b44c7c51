package launcherpod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// secretFileMode is the mode of a mounted Secret's files: readable by the owner (root) and the
// Pod's fsGroup (the launcher's group, 107), by no one else.
const secretFileMode int32 = 0o440

// secretRef is one Secret a VMI volume refers to, and what for.
type secretRef struct {
	volume string // the VMI volume's name, a DNS-1123 label
	use    string // protocol.UserDataSecret or NetworkDataSecret
	secret string // the Secret's name
}

// volumeSecrets lists the Secrets of one VMI volume: a cloud-init volume's secretRef and
// networkDataSecretRef. (containerDisk's imagePullSecret is one of the Pod's
// imagePullSecrets: the kubelet pulls the image.)
func volumeSecrets(vol *v1.Volume) []secretRef {
	var refs []secretRef
	if ci, _ := vol.CloudInit(); ci != nil {
		if ci.UserDataSecretRef != nil {
			refs = append(refs, secretRef{volume: vol.Name, use: protocol.UserDataSecret, secret: ci.UserDataSecretRef.Name})
		}
		if ci.NetworkDataSecretRef != nil {
			refs = append(refs, secretRef{volume: vol.Name, use: protocol.NetworkDataSecret, secret: ci.NetworkDataSecretRef.Name})
		}
	}
	return refs
}

// secretVolumes mounts the Secrets the VMI's volumes refer to, read-only, each at
// protocol.SecretMountDir(<volume name>, <use>): the path is built from the volume's name (a
// DNS-1123 label, checked again here) and a constant, never from the Secret's name. A missing
// Secret keeps the Pod from starting,
// as with any secret volume; the kubelet reports it (FailedMount).
func secretVolumes(volumes []v1.Volume, path *field.Path) (diskMounts, field.ErrorList) {
	var out diskMounts
	var errs field.ErrorList
	for i := range volumes {
		refs := volumeSecrets(&volumes[i])
		if len(refs) == 0 {
			continue
		}
		if msgs := validation.IsDNS1123Label(volumes[i].Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), volumes[i].Name, msgs[0]))
			continue
		}
		for _, ref := range refs {
			if msgs := validation.IsDNS1123Subdomain(ref.secret); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Index(i), ref.secret, "Secret name: "+msgs[0]))
				continue
			}
			podVolume := ref.use + "-" + ref.volume
			if len(podVolume) > validation.DNS1123LabelMaxLength {
				podVolume = ref.use + "-" + launcherpodapi.NameSuffix(ref.volume)
			}
			src := &corev1.SecretVolumeSource{SecretName: ref.secret, DefaultMode: new(secretFileMode)}
			out.volumes = append(out.volumes, corev1.Volume{Name: podVolume, VolumeSource: corev1.VolumeSource{Secret: src}})
			out.mounts = append(out.mounts, corev1.VolumeMount{Name: podVolume, MountPath: protocol.SecretMountDir(ref.volume, ref.use), ReadOnly: true})
		}
	}
	return out, errs
}

// accessCredentialVolumes mounts the Secret of each access credential, read-only, at
// protocol.AccessCredentialMountDir(index). Not subPath mounts: the kubelet updates them when the
// Secret changes. A missing Secret keeps the Pod from starting (FailedMount), as with KubeVirt.
func accessCredentialVolumes(creds []v1.AccessCredential, path *field.Path) (diskMounts, field.ErrorList) {
	var out diskMounts
	var errs field.ErrorList
	for i, ac := range creds {
		var src *v1.AccessCredentialSecretSource
		switch {
		case ac.SSHPublicKey != nil:
			src = ac.SSHPublicKey.Source.Secret
		case ac.UserPassword != nil:
			src = ac.UserPassword.Source.Secret
		}
		if src == nil {
			errs = append(errs, field.Required(path.Index(i), "a credential with a secret source"))
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(src.SecretName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i), src.SecretName, "Secret name: "+msgs[0]))
			continue
		}
		name := "access-credential-" + strconv.Itoa(i)
		out.volumes = append(out.volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: src.SecretName, DefaultMode: new(secretFileMode)}}})
		out.mounts = append(out.mounts, corev1.VolumeMount{Name: name, MountPath: protocol.AccessCredentialMountDir(i), ReadOnly: true})
	}
	return out, errs
}
