package vmi

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestDataVolumeGate(t *testing.T) {
	dvs := map[string]*cdiv1beta1.DataVolume{}
	add := func(name string, phase cdiv1beta1.DataVolumePhase, msg string) {
		dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: cdiv1beta1.DataVolumeStatus{Phase: phase, Progress: "12.50%"}}
		if msg != "" {
			dv.Status.Conditions = []cdiv1beta1.DataVolumeCondition{{Type: cdiv1beta1.DataVolumeRunning, Message: msg}}
		}
		dvs[name] = dv
	}
	add("done", cdiv1beta1.Succeeded, "")
	add("wffc", cdiv1beta1.WaitForFirstConsumer, "")
	add("busy", cdiv1beta1.ImportInProgress, "")
	add("broken", cdiv1beta1.Failed, "GET http://x/y: 404 Not Found")
	get := func(name string) (*cdiv1beta1.DataVolume, error) {
		if dv, ok := dvs[name]; ok {
			return dv, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "cdi.kubevirt.io", Resource: "datavolumes"}, name)
	}
	vmiWith := func(names ...string) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{}
		vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: "cd", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}})
		for _, n := range names {
			vmi.Spec.Volumes = append(vmi.Spec.Volumes, v1.Volume{Name: n, VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: n}}})
		}
		return vmi
	}
	for name, tc := range map[string]struct {
		vols   []string
		status v1.ConditionStatus
		reason string
		says   string
	}{
		"ready and first consumer": {[]string{"done", "wffc"}, v1.ConditionTrue, v1.ReasonAllDataVolumesReady, ""},
		"importing":                {[]string{"done", "busy"}, v1.ConditionFalse, v1.ReasonDataVolumeNotReady, "busy (ImportInProgress 12.50%)"},
		"missing":                  {[]string{"busy", "nope"}, v1.ConditionFalse, v1.ReasonDataVolumeNotFound, "nope"},
		"failed wins":              {[]string{"busy", "nope", "broken"}, v1.ConditionFalse, v1.ReasonDataVolumeFailed, "broken (GET http://x/y: 404 Not Found)"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := dataVolumeGate(vmiWith(tc.vols...), get)
			if err != nil || c == nil || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.says) {
				t.Errorf("condition %+v (%v); want %s %s saying %q", c, err, tc.status, tc.reason, tc.says)
			}
		})
	}
	if c, err := dataVolumeGate(vmiWith(), get); c != nil || err != nil {
		t.Errorf("a VMI without DataVolumes got %+v, %v", c, err)
	}
	var st v1.VirtualMachineInstanceStatus
	c, _ := dataVolumeGate(vmiWith("busy"), get)
	withDataVolumes(&st, c, metav1.Now())
	if p := st.Condition(v1.VirtualMachineInstanceProvisioning); p == nil || p.Status != v1.ConditionTrue {
		t.Errorf("Provisioning %+v while a DataVolume imports", p)
	}
}
