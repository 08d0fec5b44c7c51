package vmi

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestLiveMigratable(t *testing.T) {
	modes := func(_ context.Context, claim string) ([]corev1.PersistentVolumeAccessMode, error) {
		switch claim {
		case "shared":
			return []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, nil
		case "local":
			return []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("persistentvolumeclaims"), claim)
	}
	vmi := func(volumes []v1.Volume, bridge bool, annotations map[string]string) *v1.VirtualMachineInstance {
		x := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: annotations}}
		x.Spec.Volumes = volumes
		x.Spec.Networks = []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}}
		iface := v1.Interface{Name: "default"}
		if bridge {
			iface.Bridge = &v1.InterfaceBridge{}
		} else {
			iface.Masquerade = &v1.InterfaceMasquerade{}
		}
		x.Spec.Domain.Devices.Interfaces = []v1.Interface{iface}
		return x
	}
	pvc := func(name string) v1.Volume {
		return v1.Volume{Name: "d-" + name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
	}
	dv := func(name string) v1.Volume {
		return v1.Volume{Name: "dv-" + name, VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: name}}}
	}
	container := v1.Volume{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}}
	for _, tc := range []struct {
		name   string
		vmi    *v1.VirtualMachineInstance
		status v1.ConditionStatus
		reason string
		msg    string
	}{
		{"containerDisk, masquerade", vmi([]v1.Volume{container}, false, nil), v1.ConditionTrue, "", ""},
		{"shared claim", vmi([]v1.Volume{container, pvc("shared"), dv("shared")}, false, nil), v1.ConditionTrue, "", ""},
		{"local claim", vmi([]v1.Volume{pvc("shared"), pvc("local")}, false, nil), v1.ConditionFalse, v1.ReasonDisksNotLiveMigratable,
			"cannot migrate VMI: PVC local is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"},
		{"local DataVolume", vmi([]v1.Volume{dv("local")}, false, nil), v1.ConditionFalse, v1.ReasonDisksNotLiveMigratable, "PVC local is not shared"},
		{"missing claim", vmi([]v1.Volume{pvc("gone")}, false, nil), v1.ConditionFalse, v1.ReasonDisksNotLiveMigratable, "Unable to determine if PVC gone is shared"},
		{"bridge on the pod network", vmi([]v1.Volume{container}, true, nil), v1.ConditionFalse, v1.ReasonInterfaceNotLiveMigratable, "does not use masquerade"},
		{"bridge allowed", vmi([]v1.Volume{container}, true, map[string]string{AllowPodBridgeMigrationAnnotation: "true"}), v1.ConditionTrue, "", ""},
	} {
		cond, err := liveMigratable(context.Background(), tc.vmi, modes)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cond.Type != v1.VirtualMachineInstanceIsMigratable || cond.Status != tc.status || cond.Reason != tc.reason || !strings.Contains(cond.Message, tc.msg) {
			t.Errorf("%s: %+v, want %s %s %q", tc.name, cond, tc.status, tc.reason, tc.msg)
		}
	}
}
