package vmiaction

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func vmiIn(phase v1.VirtualMachineInstancePhase, paused bool) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns"}, Status: v1.VirtualMachineInstanceStatus{Phase: phase}}
	if paused {
		vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: v1.ConditionTrue}}
	}
	return vmi
}

func TestCheck(t *testing.T) {
	off := false
	noACPI := vmiIn(v1.Running, false)
	noACPI.Spec.Domain.Features = &v1.Features{ACPI: v1.FeatureState{Enabled: &off}}
	deleting := vmiIn(v1.Running, false)
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, c := range []struct {
		action string
		vmi    *v1.VirtualMachineInstance
		dryRun bool
		want   string // "" allowed, else the 409's message part
	}{
		{Pause, vmiIn(v1.Running, false), false, ""},
		{Pause, vmiIn(v1.Scheduled, false), false, `VMI is not running (phase "Scheduled")`},
		{Pause, vmiIn(v1.Succeeded, false), true, "VMI is not running"},
		{Pause, deleting, false, "VMI is not running: it is being deleted"},
		{Pause, vmiIn(v1.Running, true), true, "VMI is already paused"},
		{Pause, vmiIn(v1.Running, true), false, ""}, // the launcher decides
		{Unpause, vmiIn(v1.Running, true), true, ""},
		{Unpause, vmiIn(v1.Running, false), true, "VMI is not paused"},
		{Unpause, vmiIn(v1.Running, false), false, ""}, // the status may lag behind a pause
		{Unpause, vmiIn(v1.Pending, false), false, "VMI is not running"},
		{SoftReboot, vmiIn(v1.Running, false), false, ""},
		{SoftReboot, vmiIn(v1.Running, true), true, "VMI is paused"},
		{SoftReboot, noACPI, false, "nor the ACPI feature enabled"},
	} {
		err := Check(c.action, c.vmi, c.dryRun)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s of %s (dry run %v): refused: %v", c.action, c.vmi.Status.Phase, c.dryRun, err)
		case c.want != "" && (!apierrors.IsConflict(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s of %s (dry run %v): %v, want a 409 saying %q", c.action, c.vmi.Status.Phase, c.dryRun, err, c.want)
		}
	}
	if err := Check("reset", vmiIn(v1.Running, false), false); !apierrors.IsNotFound(err) {
		t.Errorf("unknown action: %v, want 404", err)
	}
}
