package validation

import (
	"strings"
	"testing"

	"github.com/vireo-dev/vireo/apis/core"
	"github.com/vireo-dev/vireo/apis/core/defaults"
)

func TestDefaultedMinimalVMIIsValid(t *testing.T) {
	vmi := &core.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace = "minimal", "default"
	vmi.Spec.Domain.Resources.Requests = core.ResourceList{core.ResourceMemory: q("64Mi")}
	vmi.Spec.Volumes = []core.Volume{
		{Name: "root", VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{Image: "quay.io/containerdisks/cirros"}}},
		{Name: "ci", VolumeSource: core.VolumeSource{CloudInitNoCloud: &core.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
	}
	defaults.SetVirtualMachineInstanceDefaults(vmi)
	expectErrors(t, ValidateVirtualMachineInstance(vmi))
}

func TestVMIUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(vmi *core.VirtualMachineInstance)
		want   []fe
		field  string
	}{
		{name: "labels and status may change", mutate: func(vmi *core.VirtualMachineInstance) {
			vmi.Labels = map[string]string{"app": "web"}
			vmi.Status.Phase = core.Running
		}},
		{name: "equal quantities in another form", mutate: func(vmi *core.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests[core.ResourceMemory] = q("134217728")
		}},
		{name: "domain changed", mutate: func(vmi *core.VirtualMachineInstance) {
			vmi.Spec.Domain.CPU.Sockets = 2
		}, want: []fe{{forbidden, "spec"}}, field: "spec.domain"},
		{name: "volumes changed", mutate: func(vmi *core.VirtualMachineInstance) {
			vmi.Spec.Volumes[0].ContainerDisk.Image = "quay.io/containerdisks/fedora:42"
		}, want: []fe{{forbidden, "spec"}}, field: "spec.volumes"},
		{name: "grace changed", mutate: func(vmi *core.VirtualMachineInstance) {
			vmi.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
		}, want: []fe{{forbidden, "spec"}}, field: "spec.terminationGracePeriodSeconds"},
		{name: "name changed", mutate: func(vmi *core.VirtualMachineInstance) {
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
	cond := func(typ core.VirtualMachineInstanceConditionType, status core.ConditionStatus) core.VirtualMachineInstanceCondition {
		return core.VirtualMachineInstanceCondition{Type: typ, Status: status}
	}
	cases := []struct {
		name   string
		status core.VirtualMachineInstanceStatus
		want   []fe
	}{
		{name: "empty"},
		{name: "running and ready", status: core.VirtualMachineInstanceStatus{Phase: core.Running, Conditions: []core.VirtualMachineInstanceCondition{
			cond(core.VirtualMachineInstanceReady, core.ConditionTrue), cond(core.VirtualMachineInstancePaused, core.ConditionFalse),
			cond("SomethingNew", core.ConditionUnknown)}}},
		{name: "every phase", status: core.VirtualMachineInstanceStatus{Phase: core.Unknown}},
		{name: "unknown phase", status: core.VirtualMachineInstanceStatus{Phase: "Booting"},
			want: []fe{{notSupported, "status.phase"}}},
		{name: "condition without type", status: core.VirtualMachineInstanceStatus{Conditions: []core.VirtualMachineInstanceCondition{
			cond(core.VirtualMachineInstanceReady, core.ConditionTrue), cond("", core.ConditionTrue)}},
			want: []fe{{required, "status.conditions[1].type"}}},
		{name: "condition with bad status", status: core.VirtualMachineInstanceStatus{Conditions: []core.VirtualMachineInstanceCondition{
			cond(core.VirtualMachineInstanceReady, "true")}},
			want: []fe{{notSupported, "status.conditions[0].status"}}},
		{name: "condition without status", status: core.VirtualMachineInstanceStatus{Conditions: []core.VirtualMachineInstanceCondition{
			cond(core.VirtualMachineInstanceReady, "")}},
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
