package measure

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// VMI is the object every benchmark stores: a small but realistic VirtualMachineInstance, as a
// user would write it (no defaults filled in).
func VMI(ns, name string) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"bench": "yes"}},
		Spec: v1.VirtualMachineInstanceSpec{
			Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceMemory: resource.MustParse("64Mi"),
			}}},
			Volumes: []v1.Volume{{Name: "root", VolumeSource: v1.VolumeSource{
				ContainerDisk: &v1.ContainerDiskSource{Image: "registry.local/tiny:1.0"},
			}}},
		},
	}
}
