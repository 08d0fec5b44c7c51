// Package replicastatus keeps the conditions that replica sets and VM pools share (their status
// has the same fields): ReplicaPaused while paused, ReplicaFailure while the last scaling failed.
package replicastatus

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// SetConditions sets ReplicaPaused from paused and ReplicaFailure from scaleErr, the error of the
// last scaling (nil when it worked or did not run); scaledUp says whether it created
// (FailedCreate) or deleted (FailedDelete).
func SetConditions(st *v1.VirtualMachineInstanceReplicaSetStatus, paused bool, scaleErr error, scaledUp bool, now metav1.Time) {
	if paused {
		setCondition(st, v1.VirtualMachineInstanceReplicaSetCondition{Type: v1.ReplicaSetReplicaPaused, Status: v1.ConditionTrue,
			Reason: "Paused", Message: "Controller got paused"}, now)
	} else {
		removeCondition(st, v1.ReplicaSetReplicaPaused)
	}
	if scaleErr == nil {
		removeCondition(st, v1.ReplicaSetReplicaFailure)
		return
	}
	reason := "FailedDelete"
	if scaledUp {
		reason = "FailedCreate"
	}
	setCondition(st, v1.VirtualMachineInstanceReplicaSetCondition{Type: v1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue,
		Reason: reason, Message: scaleErr.Error()}, now)
}

// setCondition adds c or updates the condition of its type, keeping its transition time when
// its status does not change.
func setCondition(st *v1.VirtualMachineInstanceReplicaSetStatus, c v1.VirtualMachineInstanceReplicaSetCondition, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type != c.Type {
			continue
		}
		c.LastTransitionTime = st.Conditions[i].LastTransitionTime
		if st.Conditions[i].Status != c.Status {
			c.LastTransitionTime = now
		}
		st.Conditions[i] = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *v1.VirtualMachineInstanceReplicaSetStatus, t v1.VirtualMachineInstanceReplicaSetConditionType) {
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c v1.VirtualMachineInstanceReplicaSetCondition) bool { return c.Type == t })
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
}
