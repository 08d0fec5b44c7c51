package vm

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// VirtualMachineRestartRequired is KubeVirt's condition for a VM whose template changed while
// its VMI runs: the change applies at the next start, the guest is not restarted for it.
const VirtualMachineRestartRequired v1.VirtualMachineConditionType = "RestartRequired"

// vmStatus computes the VM's status from its VMI (nil when none exists). createErr is the
// error of this sync's attempt to create the VMI, if any.
func vmStatus(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, createErr error, now metav1.Time) v1.VirtualMachineStatus {
	st := *vm.Status.DeepCopy()
	st.Created = vmi != nil
	st.Ready = vmi != nil && vmi.Status.Phase == v1.Running && vmiCondition(vmi, v1.VirtualMachineInstanceReady) == v1.ConditionTrue
	st.PrintableStatus = printableStatus(vm, vmi, now)
	st.DesiredGeneration = vm.Generation
	st.RunStrategy = RunStrategy(vm)
	if vmi != nil {
		st.ObservedGeneration = createdFromGeneration(vmi)
	}

	ready := v1.VirtualMachineCondition{Type: v1.VirtualMachineReady, Status: v1.ConditionFalse, Reason: v1.ReasonVMINotExists, Message: "VMI does not exist"}
	if vmi != nil {
		ready.Reason, ready.Message = "", ""
		if c := findVMICondition(vmi, v1.VirtualMachineInstanceReady); c != nil {
			ready.Status, ready.Reason, ready.Message = c.Status, c.Reason, c.Message
		}
		if st.Ready {
			ready.Status = v1.ConditionTrue
		}
	}
	setCondition(&st, ready, now)

	if c := findVMICondition(vmi, v1.VirtualMachineInstancePaused); c != nil && c.Status == v1.ConditionTrue {
		setCondition(&st, v1.VirtualMachineCondition{Type: v1.VirtualMachinePaused, Status: v1.ConditionTrue, Reason: c.Reason, Message: c.Message}, now)
	} else {
		removeCondition(&st, v1.VirtualMachinePaused)
	}

	if createErr != nil {
		setCondition(&st, v1.VirtualMachineCondition{Type: v1.VirtualMachineFailure, Status: v1.ConditionTrue,
			Reason: v1.ReasonFailedCreate, Message: "creating the VMI: " + createErr.Error()}, now)
	} else if vmi != nil {
		removeCondition(&st, v1.VirtualMachineFailure)
	}

	if vmi != nil && !isFinal(vmi) && vmi.Annotations[TemplateHashAnnotation] != templateHash(vm) {
		setCondition(&st, v1.VirtualMachineCondition{Type: VirtualMachineRestartRequired, Status: v1.ConditionTrue,
			Reason: v1.ReasonTemplateChanged, Message: "the VM's template changed since its VMI was created: restart the VM to apply it"}, now)
	} else {
		removeCondition(&st, VirtualMachineRestartRequired)
	}
	return st
}

// printableStatus is the one word `kubectl get vm` shows, KubeVirt's.
func printableStatus(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, now metav1.Time) v1.VirtualMachinePrintableStatus {
	switch {
	case vm.DeletionTimestamp != nil:
		return v1.VirtualMachineStatusTerminating
	case vmi == nil || isFinal(vmi):
		if inBackoff(vm, now) {
			return v1.VirtualMachineStatusCrashLoopBackOff
		}
		return v1.VirtualMachineStatusStopped
	case vmi.DeletionTimestamp != nil:
		return v1.VirtualMachineStatusStopping
	}
	switch vmi.Status.Phase {
	case v1.Running:
		// KubeVirt's precedence: a paused guest that migrates shows Migrating.
		if migrating(vmi) {
			return v1.VirtualMachineStatusMigrating
		}
		if vmiCondition(vmi, v1.VirtualMachineInstancePaused) == v1.ConditionTrue {
			return v1.VirtualMachineStatusPaused
		}
		return v1.VirtualMachineStatusRunning
	case v1.Unknown:
		return v1.VirtualMachineStatusUnknown
	}
	return startingStatus(vmi)
}

// migrating reports whether a migration of the VMI is in flight: its target Pod was created
// and it has neither completed nor failed.
func migrating(vmi *v1.VirtualMachineInstance) bool {
	m := vmi.Status.MigrationState
	return m != nil && m.TargetPod != "" && !m.Completed && !m.Failed
}

// startingStatus tells a VMI on its way to Running from one that is stuck, and why.
func startingStatus(vmi *v1.VirtualMachineInstance) v1.VirtualMachinePrintableStatus {
	if c := findVMICondition(vmi, v1.VirtualMachineInstanceDataVolumesReady); c != nil && c.Status == v1.ConditionFalse {
		if c.Reason == v1.ReasonDataVolumeFailed {
			return v1.VirtualMachineStatusDataVolumeError
		}
		return v1.VirtualMachineStatusProvisioning
	}
	if c := findVMICondition(vmi, v1.VirtualMachineInstancePodScheduled); c != nil && c.Status == v1.ConditionFalse {
		msg := strings.ToLower(c.Message)
		if strings.Contains(msg, "persistentvolumeclaim") && strings.Contains(msg, "not found") {
			return v1.VirtualMachineStatusPvcNotFound
		}
		return v1.VirtualMachineStatusUnschedulable
	}
	if c := findVMICondition(vmi, v1.VirtualMachineInstanceSynchronized); c != nil && c.Status == v1.ConditionFalse {
		switch c.Reason {
		case string(v1.VirtualMachineStatusErrImagePull), string(v1.VirtualMachineStatusImagePullBackOff):
			return v1.VirtualMachinePrintableStatus(c.Reason)
		}
	}
	return v1.VirtualMachineStatusStarting
}

func isFinal(vmi *v1.VirtualMachineInstance) bool {
	return vmi.Status.Phase == v1.Succeeded || vmi.Status.Phase == v1.Failed
}

func findVMICondition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) *v1.VirtualMachineInstanceCondition {
	if vmi == nil {
		return nil
	}
	return vmi.Status.Condition(t)
}

func vmiCondition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) v1.ConditionStatus {
	if c := findVMICondition(vmi, t); c != nil {
		return c.Status
	}
	return v1.ConditionUnknown
}

// setCondition sets c, keeping its transition time when its status did not change.
func setCondition(st *v1.VirtualMachineStatus, c v1.VirtualMachineCondition, now metav1.Time) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime, c.LastProbeTime = old.LastTransitionTime, old.LastProbeTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		*old = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *v1.VirtualMachineStatus, t v1.VirtualMachineConditionType) {
	out := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	st.Conditions = out
}
