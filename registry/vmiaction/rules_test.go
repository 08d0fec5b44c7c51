package vmiaction

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

func TestCheck(t *testing.T) {
	off := false
	noACPI := libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running))
	noACPI.Spec.Domain.Features = &v1.Features{ACPI: v1.FeatureState{Enabled: &off}}
	noACPIWithAgent := noACPI.DeepCopy()
	noACPIWithAgent.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceAgentConnected, Status: v1.ConditionTrue}}
	deleting := libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running))
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, c := range []struct {
		action string
		vmi    *v1.VirtualMachineInstance
		dryRun bool
		want   string // "" allowed, else the 409's message part
	}{
		{Pause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), false, ""},
		{Pause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Scheduled)), false, `VMI is not running (phase "Scheduled")`},
		{Pause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Succeeded)), true, "VMI is not running"},
		{Pause, deleting, false, "VMI is not running: it is being deleted"},
		{Pause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running), libvmi.Paused()), true, "VMI is already paused"},
		{Pause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running), libvmi.Paused()), false, ""}, // the launcher decides
		{Unpause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running), libvmi.Paused()), true, ""},
		{Unpause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), true, "VMI is not paused"},
		{Unpause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), false, ""}, // the status may lag behind a pause
		{Unpause, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Pending)), false, "VMI is not running"},
		{SoftReboot, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), false, ""},
		{SoftReboot, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running), libvmi.Paused()), true, "VMI is paused"},
		{SoftReboot, noACPI, false, "nor the ACPI feature enabled"},
		{SoftReboot, noACPIWithAgent, false, ""}, // the agent reboots it
		{Freeze, noACPIWithAgent, false, ""},
		{Unfreeze, noACPIWithAgent, true, ""},
		{Freeze, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), false, "VMI does not have guest agent connected"},
		{Unfreeze, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), true, "VMI does not have guest agent connected"},
		{Reset, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running), libvmi.Paused()), true, ""},
		{Reset, noACPI, true, ""},
		{Reset, libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Scheduling)), false, "VMI is not running"},
	} {
		err := Check(c.action, c.vmi, c.dryRun)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s of %s (dry run %v): refused: %v", c.action, c.vmi.Status.Phase, c.dryRun, err)
		case c.want != "" && (!apierrors.IsConflict(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s of %s (dry run %v): %v, want a 409 saying %q", c.action, c.vmi.Status.Phase, c.dryRun, err, c.want)
		}
	}
	if err := Check("powercycle", libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)), false); !apierrors.IsNotFound(err) {
		t.Errorf("unknown action: %v, want 404", err)
	}
}
