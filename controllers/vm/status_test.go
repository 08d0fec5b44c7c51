package vm

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

func withCondition(vmi *v1.VirtualMachineInstance, c v1.VirtualMachineInstanceCondition) *v1.VirtualMachineInstance {
	vmi.Status.Conditions = append(vmi.Status.Conditions, c)
	return vmi
}

func TestPrintableStatus(t *testing.T) {
	deleting := libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun())
	deleting.DeletionTimestamp = &now
	migrating := libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun())
	migrating.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{TargetPod: "virt-launcher-vm-abcde"}
	migrated := libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun())
	migrated.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{TargetPod: "virt-launcher-vm-abcde", StartTimestamp: &now, Completed: true}
	migrationFailed := libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun())
	migrationFailed.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{TargetPod: "virt-launcher-vm-abcde", Failed: true}
	cases := []struct {
		name string
		vm   *v1.VirtualMachine
		vmi  *v1.VirtualMachineInstance
		want v1.VirtualMachinePrintableStatus
	}{
		{"no VMI", newVM(v1.RunStrategyHalted), nil, v1.VirtualMachineStatusStopped},
		{"finished VMI", newVM(v1.RunStrategyOnce), libvmi.New(libvmi.InPhase(v1.Succeeded), libvmi.HasRun()), v1.VirtualMachineStatusStopped},
		{"crash loop", newVM(v1.RunStrategyAlways, failedBefore(2, time.Minute)), nil, v1.VirtualMachineStatusCrashLoopBackOff},
		{"starting", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Scheduling)), v1.VirtualMachineStatusStarting},
		{"running", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), v1.VirtualMachineStatusRunning},
		{"paused", newVM(v1.RunStrategyAlways), withCondition(libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePaused, Status: v1.ConditionTrue}), v1.VirtualMachineStatusPaused},
		{"migrating", newVM(v1.RunStrategyAlways), migrating, v1.VirtualMachineStatusMigrating},
		{"paused and migrating (KubeVirt's precedence)", newVM(v1.RunStrategyAlways), withCondition(migrating.DeepCopy(), v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePaused, Status: v1.ConditionTrue}), v1.VirtualMachineStatusMigrating},
		{"migration completed", newVM(v1.RunStrategyAlways), migrated, v1.VirtualMachineStatusRunning},
		{"migration failed", newVM(v1.RunStrategyAlways), migrationFailed, v1.VirtualMachineStatusRunning},
		{"stopping", newVM(v1.RunStrategyHalted), deleting, v1.VirtualMachineStatusStopping},
		{"terminating", newVM(v1.RunStrategyAlways, func(vm *v1.VirtualMachine) { vm.DeletionTimestamp = &now }), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), v1.VirtualMachineStatusTerminating},
		{"unschedulable", newVM(v1.RunStrategyAlways), withCondition(libvmi.New(libvmi.InPhase(v1.Scheduling)), v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes are available: 2 Insufficient memory."}), v1.VirtualMachineStatusUnschedulable},
		{"PVC not found", newVM(v1.RunStrategyAlways), withCondition(libvmi.New(libvmi.InPhase(v1.Scheduling)), v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable", Message: `0/2 nodes are available: persistentvolumeclaim "disk" not found.`}), v1.VirtualMachineStatusPvcNotFound},
		{"image pull", newVM(v1.RunStrategyAlways), withCondition(libvmi.New(libvmi.InPhase(v1.Scheduled)), v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: v1.ConditionFalse, Reason: "ErrImagePull"}), v1.VirtualMachineStatusErrImagePull},
		{"unknown", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Unknown), libvmi.HasRun()), v1.VirtualMachineStatusUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := vmStatus(c.vm, c.vmi, nil, now).PrintableStatus; got != c.want {
				t.Errorf("printableStatus = %s, want %s", got, c.want)
			}
		})
	}
}

func TestVMStatusFields(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	vmi := newVMI(vm, false)
	vmi.Status.Phase = v1.Running
	vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}}
	st := vmStatus(vm, vmi, nil, now)
	if !st.Created || !st.Ready || st.ObservedGeneration != 2 || st.DesiredGeneration != 2 || st.RunStrategy != v1.RunStrategyAlways {
		t.Errorf("status %+v", st)
	}
	if c := vmCondition(st, v1.VirtualMachineReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("Ready condition %+v", c)
	}
	if vmCondition(st, VirtualMachineRestartRequired) != nil {
		t.Error("RestartRequired without a template change")
	}

	// The template changes under the running VMI: RestartRequired, nothing restarted.
	vm.Spec.Template.Spec.Hostname = "changed"
	vm.Generation = 3
	vm.Status = st
	st = vmStatus(vm, vmi, nil, metav1.NewTime(now.Add(time.Minute)))
	if c := vmCondition(st, VirtualMachineRestartRequired); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("RestartRequired after a template change: %+v", c)
	}
	if p := decide(vm, vmi, now); p != (plan{}) {
		t.Errorf("a template change planned %+v; want nothing", p)
	}
	// A run strategy change alone is no template change.
	vm2 := newVM(v1.RunStrategyAlways)
	vmi2 := newVMI(vm2, false)
	halted := v1.RunStrategyManual
	vm2.Spec.RunStrategy = &halted
	if vmCondition(vmStatus(vm2, vmi2, nil, now), VirtualMachineRestartRequired) != nil {
		t.Error("RestartRequired after a run strategy change")
	}

	// No VMI; a create that failed shows as Failure.
	st = vmStatus(newVM(v1.RunStrategyAlways), nil, errors.New("quota exceeded"), now)
	if st.Created || st.Ready {
		t.Errorf("created %v ready %v without a VMI", st.Created, st.Ready)
	}
	if c := vmCondition(st, v1.VirtualMachineFailure); c == nil || c.Reason != v1.ReasonFailedCreate {
		t.Errorf("Failure condition %+v", c)
	}
	if c := vmCondition(st, v1.VirtualMachineReady); c == nil || c.Reason != v1.ReasonVMINotExists {
		t.Errorf("Ready condition %+v", c)
	}
}

func vmCondition(st v1.VirtualMachineStatus, t v1.VirtualMachineConditionType) *v1.VirtualMachineCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}
