package validation

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestDefaultedMinimalVMIIsValid(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace = "minimal", "default"
	vmi.Spec.Domain.Resources.Requests = v1.ResourceList{v1.ResourceMemory: q("64Mi")}
	vmi.Spec.Volumes = []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "quay.io/containerdisks/cirros"}}},
		{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
	}
	defaults.SetVirtualMachineInstanceDefaults(vmi)
	expectErrors(t, ValidateVirtualMachineInstance(vmi))
}

func TestVMIUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vmi *v1.VirtualMachineInstance)
		want   []fe
		field  string
	}{
		{name: "labels and status may change", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Labels = map[string]string{"app": "web"}
			vmi.Status.Phase = v1.Running
		}},
		{name: "equal quantities in another form", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests[v1.ResourceMemory] = q("134217728")
		}},
		{name: "domain changed", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.CPU.Sockets = 2
		}, want: []fe{{forbidden, "spec"}}, field: "spec.domain"},
		{name: "volumes changed", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Volumes[0].ContainerDisk.Image = "quay.io/containerdisks/fedora:42"
		}, want: []fe{{forbidden, "spec"}}, field: "spec.volumes"},
		{name: "grace lowered (a forced stop)", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.TerminationGracePeriodSeconds = ptr.To(int64(0))
		}},
		{name: "grace raised", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.TerminationGracePeriodSeconds = ptr.To(int64(600))
		}, want: []fe{{invalid, "spec.terminationGracePeriodSeconds"}}},
		{name: "grace lowered with another change", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.TerminationGracePeriodSeconds = ptr.To(int64(0))
			vmi.Spec.Domain.CPU.Sockets = 2
		}, want: []fe{{forbidden, "spec"}}, field: "spec.domain"},
		{name: "name changed", mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Name = "other"
		}, want: []fe{{invalid, "metadata.name"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validVMI()
			old.ResourceVersion = "1"
			vmi := old.DeepCopy()
			tc.mutate(vmi)
			errs := ValidateVirtualMachineInstanceUpdate(vmi, old)
			expectErrors(t, errs, tc.want...)
			if tc.field != "" && len(errs) == 1 && !strings.Contains(errs[0].Detail, "("+tc.field+" was changed)") {
				t.Errorf("message %q does not name %s", errs[0].Detail, tc.field)
			}
		})
	}
}

func TestVMIStatusUpdate(t *testing.T) {
	cond := func(typ v1.VirtualMachineInstanceConditionType, status v1.ConditionStatus) v1.VirtualMachineInstanceCondition {
		return v1.VirtualMachineInstanceCondition{Type: typ, Status: status}
	}
	cases := []struct {
		name   string
		status v1.VirtualMachineInstanceStatus
		want   []fe
	}{
		{name: "empty"},
		{name: "running and ready", status: v1.VirtualMachineInstanceStatus{Phase: v1.Running, Conditions: []v1.VirtualMachineInstanceCondition{
			cond(v1.VirtualMachineInstanceReady, v1.ConditionTrue), cond(v1.VirtualMachineInstancePaused, v1.ConditionFalse),
			cond("SomethingNew", v1.ConditionUnknown)}}},
		{name: "every phase", status: v1.VirtualMachineInstanceStatus{Phase: v1.Unknown}},
		{name: "unknown phase", status: v1.VirtualMachineInstanceStatus{Phase: "Booting"},
			want: []fe{{notSupported, "status.phase"}}},
		{name: "condition without type", status: v1.VirtualMachineInstanceStatus{Conditions: []v1.VirtualMachineInstanceCondition{
			cond(v1.VirtualMachineInstanceReady, v1.ConditionTrue), cond("", v1.ConditionTrue)}},
			want: []fe{{required, "status.conditions[1].type"}}},
		{name: "condition with bad status", status: v1.VirtualMachineInstanceStatus{Conditions: []v1.VirtualMachineInstanceCondition{
			cond(v1.VirtualMachineInstanceReady, "true")}},
			want: []fe{{notSupported, "status.conditions[0].status"}}},
		{name: "condition twice", status: v1.VirtualMachineInstanceStatus{Conditions: []v1.VirtualMachineInstanceCondition{
			cond(v1.VirtualMachineInstanceReady, v1.ConditionTrue), cond(v1.VirtualMachineInstanceReady, v1.ConditionFalse)}},
			want: []fe{{duplicate, "status.conditions[1].type"}}},
		{name: "runtime user", status: v1.VirtualMachineInstanceStatus{RuntimeUser: 107}},
		{name: "negative runtime user", status: v1.VirtualMachineInstanceStatus{RuntimeUser: -1},
			want: []fe{{invalid, "status.runtimeUser"}}},
		{name: "condition without status", status: v1.VirtualMachineInstanceStatus{Conditions: []v1.VirtualMachineInstanceCondition{
			cond(v1.VirtualMachineInstanceReady, "")}},
			want: []fe{{notSupported, "status.conditions[0].status"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validVMI()
			vmi := old.DeepCopy()
			vmi.Status = tc.status
			expectErrors(t, ValidateVirtualMachineInstanceStatusUpdate(vmi, old), tc.want...)
		})
	}
	for _, phase := range vmiPhases {
		vmi := validVMI()
		vmi.Status.Phase = phase
		expectErrors(t, ValidateVirtualMachineInstanceStatusUpdate(vmi, validVMI()))
	}
}
