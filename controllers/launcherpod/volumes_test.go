package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

func TestPodName(t *testing.T) {
	a, b := launcherpodapi.PodName("vm", "uid-1"), launcherpodapi.PodName("vm", "uid-2")
	if !strings.HasPrefix(a, "virt-launcher-vm-") || len(a) != len("virt-launcher-vm-")+5 {
		t.Errorf("launcherpodapi.PodName = %q, want virt-launcher-vm-<5 characters>", a)
	}
	if a == b {
		t.Errorf("two VMIs of one name got the same launcher Pod name %q", a)
	}
	if again := launcherpodapi.PodName("vm", "uid-1"); again != a {
		t.Errorf("launcherpodapi.PodName is not deterministic: %q then %q", a, again)
	}
	long := launcherpodapi.PodName(strings.Repeat("a", 250), "uid")
	if msgs := validation.IsDNS1123Subdomain(long); len(msgs) > 0 {
		t.Errorf("long VMI name gives an invalid Pod name %q: %v", long, msgs)
	}
}

func TestRenderDiskVolumes(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "root", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim-a"}}},
			{Name: "cd", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}},
			{Name: "data", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "dv-b"}}},
			{Name: "ro", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim-c", ReadOnly: true}}},
		}
	})
	pod := render(t, vmi, testOpts)
	var got []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			got = append(got, v)
		}
	}
	pvc := func(name, claim string, ro bool) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: ro}}}
	}
	want := []corev1.Volume{pvc("disk-root", "claim-a", false), pvc("disk-data", "dv-b", false), pvc("disk-ro", "claim-c", true)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PVC volumes (-want +got):\n%s", diff)
	}
	mounts := pod.Spec.Containers[0].VolumeMounts
	wantMounts := []corev1.VolumeMount{
		{Name: "disk-root", MountPath: "/var/run/kubevirt-private/vmi-disks/root"},
		{Name: "disk-data", MountPath: "/var/run/kubevirt-private/vmi-disks/data"},
		{Name: "disk-ro", MountPath: "/var/run/kubevirt-private/vmi-disks/ro", ReadOnly: true},
	}
	var claimMounts []corev1.VolumeMount
	for _, m := range mounts {
		if strings.HasPrefix(m.Name, "disk-") {
			claimMounts = append(claimMounts, m)
		}
	}
	if diff := cmp.Diff(wantMounts, claimMounts); diff != "" {
		t.Errorf("disk mounts (-want +got):\n%s", diff)
	}
	if DiskPath("root") != "/var/run/kubevirt-private/vmi-disks/root/disk.img" {
		t.Errorf("DiskPath = %q", DiskPath("root"))
	}
}

func TestRenderDiskVolumeErrors(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Volumes = []v1.Volume{
			{Name: "../x", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
			{Name: "ok", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{}}},
		}
	})
	_, err := Render(vmi, testOpts)
	if err == nil || !strings.Contains(err.Error(), "spec.volumes[0].name") || !strings.Contains(err.Error(), "spec.volumes[1]") {
		t.Errorf("Render error = %v, want both bad volumes named", err)
	}
}
