package v1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetPhase changes the phase and records when in PhaseTransitionTimestamps; setting the current
// phase again changes nothing.
func (st *VirtualMachineInstanceStatus) SetPhase(phase VirtualMachineInstancePhase, now metav1.Time) {
	if st.Phase == phase {
		return
	}
	st.Phase = phase
	st.PhaseTransitionTimestamps = append(st.PhaseTransitionTimestamps,
		VirtualMachineInstancePhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: now})
}

// SetCondition sets the condition of c's type: its LastTransitionTime is now when the status
// changes (or the condition is new) and is kept otherwise.
func (st *VirtualMachineInstanceStatus) SetCondition(c VirtualMachineInstanceCondition, now metav1.Time) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		c.LastProbeTime = old.LastProbeTime
		*old = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

// RemoveCondition removes the condition of type t, leaving nil rather than an empty list.
func (st *VirtualMachineInstanceStatus) RemoveCondition(t VirtualMachineInstanceConditionType) {
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c VirtualMachineInstanceCondition) bool { return c.Type == t })
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
}

// Condition returns the condition of type t, or nil.
func (st *VirtualMachineInstanceStatus) Condition(t VirtualMachineInstanceConditionType) *VirtualMachineInstanceCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}
