package launcherpod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// serviceAccountTokenSeconds is how long the token of a serviceAccount volume is asked for:
// the value Kubernetes' own token projection asks for, which kube-apiserver (with its default
// --service-account-extend-token-expiration) extends to a year, since the guest gets a copy
// the kubelet's refreshes never reach.
const serviceAccountTokenSeconds int64 = 3607

// configVolumes mounts the data of each configMap, secret, serviceAccount and downwardAPI
// volume of the VMI, read-only, at protocol.ConfigVolumeMountDir(<volume name>), where the
// launcher makes an ISO disk of it; the kubelet reads the objects with its own credentials.
// It returns the ServiceAccount the Pod must run as for a serviceAccount volume ("" if none).
func configVolumes(volumes []v1.Volume, path *field.Path) (diskMounts, string, field.ErrorList) {
	var out diskMounts
	var errs field.ErrorList
	serviceAccount := ""
	for i := range volumes {
		vol := &volumes[i]
		src := configVolumeSource(vol)
		if src == nil {
			continue
		}
		if msgs := validation.IsDNS1123Label(vol.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), vol.Name, msgs[0]))
			continue
		}
		if sa := vol.ServiceAccount; sa != nil {
			if serviceAccount != "" {
				errs = append(errs, field.Invalid(path.Index(i).Child("serviceAccount"), sa.ServiceAccountName, "a VMI may have one serviceAccount volume"))
				continue
			}
			serviceAccount = sa.ServiceAccountName
		}
		podVolume := "cfg-" + vol.Name
		if len(podVolume) > validation.DNS1123LabelMaxLength {
			podVolume = "cfg-" + launcherpodapi.NameSuffix(vol.Name)
		}
		out.volumes = append(out.volumes, corev1.Volume{Name: podVolume, VolumeSource: *src})
		out.mounts = append(out.mounts, corev1.VolumeMount{Name: podVolume, MountPath: protocol.ConfigVolumeMountDir(vol.Name), ReadOnly: true})
	}
	return out, serviceAccount, errs
}

// configVolumeSource is the Pod volume source that holds vol's data, nil for volumes of other
// kinds. Files are readable by their owner (root) and the launcher's group, not by others.
func configVolumeSource(vol *v1.Volume) *corev1.VolumeSource {
	mode := new(secretFileMode)
	switch {
	case vol.ConfigMap != nil:
		return &corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: vol.ConfigMap.Name}, Optional: vol.ConfigMap.Optional, DefaultMode: mode}}
	case vol.Secret != nil:
		return &corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: vol.Secret.SecretName, Optional: vol.Secret.Optional, DefaultMode: mode}}
	case vol.ServiceAccount != nil:
		return &corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode, Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(serviceAccountTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}
	case vol.DownwardAPI != nil:
		return &corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: downwardAPIItems(vol.DownwardAPI.Fields), DefaultMode: mode}}
	}
	return nil
}

// downwardAPIItems are a downwardAPI volume's files in core/v1 form, with Kubernetes' defaults
// filled in: API version v1, the launcher's container.
func downwardAPIItems(fields []v1.DownwardAPIVolumeFile) []corev1.DownwardAPIVolumeFile {
	items := make([]corev1.DownwardAPIVolumeFile, 0, len(fields))
	for _, f := range fields {
		item := corev1.DownwardAPIVolumeFile{Path: f.Path, Mode: f.Mode}
		if r := f.FieldRef; r != nil {
			item.FieldRef = &corev1.ObjectFieldSelector{APIVersion: r.APIVersion, FieldPath: r.FieldPath}
			if item.FieldRef.APIVersion == "" {
				item.FieldRef.APIVersion = "v1"
			}
		}
		if r := f.ResourceFieldRef; r != nil {
			item.ResourceFieldRef = &corev1.ResourceFieldSelector{ContainerName: r.ContainerName, Resource: r.Resource, Divisor: r.Divisor}
			if item.ResourceFieldRef.ContainerName == "" {
				item.ResourceFieldRef.ContainerName = launcherpodapi.ContainerName
			}
		}
		items = append(items, item)
	}
	return items
}
