package launcherpod

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// imageVolumes mounts the image of each containerDisk volume and of kernelBoot.container as
// Kubernetes image volumes, read-only: the kubelet pulls them with the Pod's imagePullSecrets
// and the node's credentials, the container runtime verifies and caches them by digest, and
// imagePullPolicy means what it means for any Pod. pinned maps a volume's name (or
// launcherpodapi.KernelBootVolumeName) to the reference to mount instead of the VMI's, such as the digest a
// migration's source runs. The returned secrets are the images' pull secrets, in order, once each.
func imageVolumes(vmi *v1.VirtualMachineInstance, pinned map[string]string, path *field.Path) (diskMounts, []corev1.LocalObjectReference, field.ErrorList) {
	var out diskMounts
	var secrets []corev1.LocalObjectReference
	var errs field.ErrorList
	add := func(podVolume, mountPath, image, pinKey string, policy v1.PullPolicy, secret string) {
		if p := pinned[pinKey]; p != "" {
			image = p
		}
		out.volumes = append(out.volumes, corev1.Volume{Name: podVolume, VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: image, PullPolicy: corev1.PullPolicy(policy)}}})
		out.mounts = append(out.mounts, corev1.VolumeMount{Name: podVolume, MountPath: mountPath, ReadOnly: true})
		if ref := (corev1.LocalObjectReference{Name: secret}); secret != "" && !slices.Contains(secrets, ref) {
			secrets = append(secrets, ref)
		}
	}
	for i, vol := range vmi.Spec.Volumes {
		cd := vol.ContainerDisk
		if cd == nil {
			continue
		}
		if msgs := validation.IsDNS1123Label(vol.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), vol.Name, msgs[0]))
			continue
		}
		if cd.Image == "" {
			errs = append(errs, field.Required(path.Index(i).Child("containerDisk", "image"), "the containerDisk's image"))
			continue
		}
		add(launcherpodapi.ContainerDiskVolumeName(vol.Name), protocol.ContainerDiskDir(vol.Name), cd.Image, vol.Name, cd.ImagePullPolicy, cd.ImagePullSecret)
	}
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		kb := fw.KernelBoot.Container
		if kb.Image == "" {
			errs = append(errs, field.Required(field.NewPath("spec", "domain", "firmware", "kernelBoot", "container", "image"), "the kernelBoot container's image"))
		} else {
			add(launcherpodapi.KernelBootVolumeName, protocol.KernelBootDir, kb.Image, launcherpodapi.KernelBootVolumeName, kb.ImagePullPolicy, kb.ImagePullSecret)
		}
	}
	return out, secrets, errs
}

// RunningImages returns, for a running launcher Pod of vmi, the digest reference of each image
// it mounts, by VMI volume name (and launcherpodapi.KernelBootVolumeName): the Pod's own image volume where it
// names a digest (vireo-controller pins tags when it creates the Pod), else what the kubelet
// reports in the compute container's volumeMounts[].volumeStatus.image.imageRef (Kubernetes'
// alpha ImageVolumeWithDigest; kubelet 1.37.2 fills it for no containerd 2.4 image volume, as
// containerd's mounts carry no volume names). Images known by neither are left out; nil for nil.
func RunningImages(pod *corev1.Pod, vmi *v1.VirtualMachineInstance) map[string]string {
	if pod == nil || vmi == nil {
		return nil
	}
	type image struct{ key, mountPath, reference string }
	var images []image
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil {
			images = append(images, image{vol.Name, protocol.ContainerDiskDir(vol.Name), vol.ContainerDisk.Image})
		}
	}
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		images = append(images, image{launcherpodapi.KernelBootVolumeName, protocol.KernelBootDir, fw.KernelBoot.Container.Image})
	}
	out := map[string]string{}
	for _, im := range images {
		if ref := specDigest(pod, im.key); ref != "" {
			out[im.key] = ref
		} else if ref := digestReference(im.reference, statusDigest(pod, im.mountPath)); ref != "" {
			out[im.key] = ref
		}
	}
	return out
}

// specDigest is the reference of the Pod's image volume of key if it names a digest.
func specDigest(pod *corev1.Pod, key string) string {
	want := launcherpodapi.KernelBootVolumeName
	if key != launcherpodapi.KernelBootVolumeName {
		want = launcherpodapi.ContainerDiskVolumeName(key)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == want && v.Image != nil && strings.Contains(v.Image.Reference, "@sha256:") {
			return v.Image.Reference
		}
	}
	return ""
}

// statusDigest is the kubelet's imageRef of the image mounted at mountPath ("" when none).
func statusDigest(pod *corev1.Pod, mountPath string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != launcherpodapi.ContainerName {
			continue
		}
		for _, vm := range cs.VolumeMounts {
			if vm.MountPath == mountPath && vm.VolumeStatus != nil && vm.VolumeStatus.Image != nil {
				return vm.VolumeStatus.Image.ImageRef
			}
		}
	}
	return ""
}

// digestReference is the reference of image's repository at the digest imageRef names
// (imageRef is repository@sha256:<hex>, as containerStatuses' imageID, or a bare sha256:<hex>);
// "" when imageRef names no digest.
func digestReference(image, imageRef string) string {
	_, digest, ok := strings.Cut(imageRef, "@")
	if !ok {
		digest = imageRef
	}
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		return ""
	}
	return ImageRepository(image) + "@" + digest
}

// ImageRepository is image without its tag or digest.
func ImageRepository(image string) string {
	if at := strings.Index(image, "@"); at >= 0 {
		image = image[:at]
	}
	if slash, colon := strings.LastIndex(image, "/"), strings.LastIndex(image, ":"); colon > slash {
		image = image[:colon] // the tag; a colon before the last slash is the registry's port
	}
	return image
}

// UnpinnedImages lists the images of vmi that pinned does not fix to a digest and whose own
// reference names none ("volume name: image"): a Pod rendered now could mount another image
// under the same tag than the one the VMI runs on.
func UnpinnedImages(vmi *v1.VirtualMachineInstance, pinned map[string]string) []string {
	var out []string
	check := func(key, image string) {
		if pinned[key] == "" && !strings.Contains(image, "@sha256:") {
			out = append(out, key+": "+image)
		}
	}
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil {
			check(vol.Name, vol.ContainerDisk.Image)
		}
	}
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		check(launcherpodapi.KernelBootVolumeName, fw.KernelBoot.Container.Image)
	}
	return out
}
