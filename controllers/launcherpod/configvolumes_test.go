package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestRenderConfigVolumes: each configMap, secret, serviceAccount and downwardAPI volume is a
// read-only Pod volume at /var/run/kubevirt-private/config-volumes/<volume>, readable by the
// launcher's group; a serviceAccount volume makes the Pod run as that ServiceAccount, with its
// token projected into that volume only.
func TestRenderConfigVolumes(t *testing.T) {
	mode := new(int32(0o440))
	pod := render(t, newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
				LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}, Optional: ptr.To(true)}}},
			{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db-creds"}}},
			{Name: "sa", VolumeSource: v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "robot"}}},
			{Name: "facts", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Fields: []v1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				{Path: "mem", ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
			}}}},
		}
	}), testOpts)
	want := []corev1.Volume{
		{Name: "cfg-app", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Optional: ptr.To(true), DefaultMode: mode}}},
		{Name: "cfg-creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-creds", DefaultMode: mode}}},
		{Name: "cfg-sa", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode, Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}},
		{Name: "cfg-facts", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode, Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}},
			{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "compute", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}}},
	}
	var got []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, "cfg-") {
			got = append(got, v)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config volumes (-want +got):\n%s", diff)
	}
	var mounts []corev1.VolumeMount
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if strings.HasPrefix(m.Name, "cfg-") {
			mounts = append(mounts, m)
		}
	}
	wantMounts := []corev1.VolumeMount{}
	for _, name := range []string{"app", "creds", "sa", "facts"} {
		wantMounts = append(wantMounts, corev1.VolumeMount{Name: "cfg-" + name, MountPath: "/var/run/kubevirt-private/config-volumes/" + name, ReadOnly: true})
	}
	if diff := cmp.Diff(wantMounts, mounts); diff != "" {
		t.Errorf("config mounts (-want +got):\n%s", diff)
	}
	if pod.Spec.ServiceAccountName != "robot" || pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("serviceAccountName %q, automount %v; want robot's token only in its volume", pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken)
	}
}

// TestRenderNoServiceAccount: without a serviceAccount volume the Pod runs as the namespace's
// default ServiceAccount (left unset), with no token.
func TestRenderNoServiceAccount(t *testing.T) {
	pod := render(t, newVMI(), testOpts)
	if pod.Spec.ServiceAccountName != "" {
		t.Errorf("serviceAccountName %q, want unset", pod.Spec.ServiceAccountName)
	}
}
