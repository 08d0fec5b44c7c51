package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestRenderImageVolumes: each containerDisk and the kernelBoot container become image volumes
// the kubelet pulls, with the VMI's pull policy, mounted read-only where the launcher looks;
// their pull secrets become the Pod's imagePullSecrets (once each); a pinned reference
// replaces the VMI's; no hostPath image cache is mounted.
func TestRenderImageVolumes(t *testing.T) {
	long := strings.Repeat("v", 63)
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "reg.example/os:1", ImagePullPolicy: v1.PullAlways, ImagePullSecret: "regcred"}}},
			{Name: long, VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "reg.example/data:latest", ImagePullSecret: "regcred"}}},
		}
		vmi.Spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{
			Image: "reg.example/kernel:6", KernelPath: "/boot/vmlinuz", ImagePullSecret: "kernelcred"}}}
	})
	opts := testOpts
	opts.PinnedImages = map[string]string{"root": "reg.example/os@" + testDigest}
	pod := render(t, vmi, opts)
	var got []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil {
			got = append(got, v)
		}
		if v.HostPath != nil && strings.Contains(v.HostPath.Path, "images") {
			t.Errorf("a hostPath image cache is mounted: %+v", v)
		}
	}
	image := func(name, ref string, policy corev1.PullPolicy) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: ref, PullPolicy: policy}}}
	}
	want := []corev1.Volume{
		image("containerdisk-root", "reg.example/os@"+testDigest, corev1.PullAlways),
		image("containerdisk-"+launcherpodapi.NameSuffix(long), "reg.example/data:latest", ""),
		image(launcherpodapi.KernelBootVolumeName, "reg.example/kernel:6", ""),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("image volumes (-want +got):\n%s", diff)
	}
	var mounts []corev1.VolumeMount
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/var/run/kubevirt/") {
			mounts = append(mounts, m)
		}
	}
	wantMounts := []corev1.VolumeMount{
		{Name: "containerdisk-root", MountPath: "/var/run/kubevirt/container-disks/root", ReadOnly: true},
		{Name: "containerdisk-" + launcherpodapi.NameSuffix(long), MountPath: "/var/run/kubevirt/container-disks/" + long, ReadOnly: true},
		{Name: launcherpodapi.KernelBootVolumeName, MountPath: "/var/run/kubevirt/kernel-boot", ReadOnly: true},
	}
	if diff := cmp.Diff(wantMounts, mounts); diff != "" {
		t.Errorf("image mounts (-want +got):\n%s", diff)
	}
	wantSecrets := []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "kernelcred"}}
	if diff := cmp.Diff(wantSecrets, pod.Spec.ImagePullSecrets); diff != "" {
		t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
	}
}

// TestRunningImages: a running Pod's image volumes that name digests, and else the digests the
// kubelet reports for them, become references of the VMI's repositories, by volume; tags and
// ports are told apart, and an image known by neither is left out.
func TestRunningImages(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "10.0.0.1:5000/os:1"}}},
			{Name: "plain", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "10.0.0.1:5000/plain"}}},
			{Name: "bad", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "os:1"}}},
			{Name: "none", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "os:1"}}},
			{Name: "pinned", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "os:2"}}},
		}
		vmi.Spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "kernel@sha256:" + strings.Repeat("f", 64)}}}
	})
	status := func(path, ref string) corev1.VolumeMountStatus {
		return corev1.VolumeMountStatus{MountPath: path, VolumeStatus: &corev1.VolumeStatus{Image: &corev1.ImageVolumeStatus{ImageRef: ref}}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: launcherpodapi.ContainerDiskVolumeName("pinned"), VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "os@" + testDigest}}},
		{Name: launcherpodapi.ContainerDiskVolumeName("none"), VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "os:1"}}},
	}}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: launcherpodapi.ContainerName, VolumeMounts: []corev1.VolumeMountStatus{
		status("/var/run/kubevirt/container-disks/root", "10.0.0.1:5000/os@"+testDigest),
		status("/var/run/kubevirt/container-disks/plain", testDigest),
		status("/var/run/kubevirt/container-disks/bad", "os:1"),
		{MountPath: "/var/run/kubevirt/container-disks/none"},
		status("/var/run/kubevirt/kernel-boot", "kernel@"+testDigest),
	}}}}}
	want := map[string]string{
		"root":                              "10.0.0.1:5000/os@" + testDigest,
		"plain":                             "10.0.0.1:5000/plain@" + testDigest,
		launcherpodapi.KernelBootVolumeName: "kernel@" + testDigest,
		"pinned":                            "os@" + testDigest,
	}
	if diff := cmp.Diff(want, RunningImages(pod, vmi)); diff != "" {
		t.Errorf("RunningImages (-want +got):\n%s", diff)
	}
	if RunningImages(nil, vmi) != nil {
		t.Error("RunningImages of no Pod is not nil")
	}
}
