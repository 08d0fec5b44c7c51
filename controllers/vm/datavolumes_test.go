package vm

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestDataVolumeFromTemplate(t *testing.T) {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vm-uid"}}
	tmpl := v1.DataVolumeTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Labels: map[string]string{"a": "b"}, ResourceVersion: "7", UID: "stale"},
		Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{
				cdiv1beta1.ResourceStorage: resource.MustParse("1Gi")}}}},
	}
	dv := dataVolume(vm, &tmpl)
	if dv.Name != "root" || dv.Namespace != "ns" || dv.Labels["a"] != "b" || dv.ResourceVersion != "" || dv.UID != "" {
		t.Errorf("metadata %+v", dv.ObjectMeta)
	}
	if !metav1.IsControlledBy(dv, vm) || dv.Spec.Source.Blank == nil {
		t.Errorf("owners %v spec %+v", dv.OwnerReferences, dv.Spec)
	}
}

func TestPrintableStatusWhileProvisioning(t *testing.T) {
	vm := &v1.VirtualMachine{}
	for reason, want := range map[string]v1.VirtualMachinePrintableStatus{
		v1.ReasonDataVolumeNotReady: v1.VirtualMachineStatusProvisioning,
		v1.ReasonDataVolumeNotFound: v1.VirtualMachineStatusProvisioning,
		v1.ReasonDataVolumeFailed:   v1.VirtualMachineStatusDataVolumeError,
	} {
		vmi := &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{Phase: v1.Pending, Conditions: []v1.VirtualMachineInstanceCondition{
			{Type: v1.VirtualMachineInstanceDataVolumesReady, Status: v1.ConditionFalse, Reason: reason}}}}
		if got := printableStatus(vm, vmi, metav1.Now()); got != want {
			t.Errorf("%s: %s, want %s", reason, got, want)
		}
	}
}
