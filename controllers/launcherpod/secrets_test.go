package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestRenderSecretVolumes(t *testing.T) {
	ref := func(name string) *v1.LocalObjectReference { return &v1.LocalObjectReference{Name: name} }
	secretVol := func(name, secret string, items ...corev1.KeyToPath) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, Items: items, DefaultMode: new(int32(0o440))}}}
	}
	mount := func(name, path string) corev1.VolumeMount {
		return corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true}
	}
	for _, tc := range []struct {
		name       string
		volumes    []v1.Volume
		want       []corev1.Volume
		wantMounts []corev1.VolumeMount
	}{{
		name: "no secrets",
		volumes: []v1.Volume{
			{Name: "cd", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}},
			{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "x"}}},
		},
	}, {
		name: "user-data and network-data secrets",
		volumes: []v1.Volume{{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
			UserDataSecretRef: ref("ud"), NetworkDataSecretRef: ref("nd")}}}},
		want: []corev1.Volume{secretVol("userdata-ci", "ud"), secretVol("networkdata-ci", "nd")},
		wantMounts: []corev1.VolumeMount{
			mount("userdata-ci", "/var/run/kubevirt-private/secret/ci/userdata"),
			mount("networkdata-ci", "/var/run/kubevirt-private/secret/ci/networkdata"),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := render(t, newVMI(func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Volumes = tc.volumes }), testOpts)
			var got []corev1.Volume
			for _, v := range pod.Spec.Volumes {
				if v.Secret != nil {
					got = append(got, v)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("secret volumes (-want +got):\n%s", diff)
			}
			var mounts []corev1.VolumeMount
			for _, m := range pod.Spec.Containers[0].VolumeMounts {
				if strings.HasPrefix(m.MountPath, "/var/run/kubevirt-private/secret/") {
					mounts = append(mounts, m)
				}
			}
			if diff := cmp.Diff(tc.wantMounts, mounts); diff != "" {
				t.Errorf("secret mounts (-want +got):\n%s", diff)
			}
			if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
				t.Error("the launcher Pod must not get a service account token")
			}
		})
	}
}

func TestRenderSecretVolumeErrors(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "../x", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x", ImagePullSecret: "s"}}},
			{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
				UserDataSecretRef: &v1.LocalObjectReference{Name: "Not/A/Name"}}}},
		}
	})
	_, err := Render(vmi, testOpts)
	if err == nil || !strings.Contains(err.Error(), "spec.volumes[0].name") || !strings.Contains(err.Error(), "spec.volumes[1]") {
		t.Errorf("Render error = %v, want both bad volumes named", err)
	}
}
