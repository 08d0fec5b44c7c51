// Package replicastatus computes the status replica sets and VM pools share (the same fields):
// replicas, ready replicas, the selector for /scale, ReplicaPaused while paused and
// ReplicaFailure while the last scaling failed.
package replicastatus

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Next is the status that follows old: replicas members of which ready are ready, the selector
// in string form, and the conditions of SetConditions.
func Next(old *v1.VirtualMachineInstanceReplicaSetStatus, replicas, ready int, selector labels.Selector, paused bool, scaleErr error, scaledUp bool, now metav1.Time) v1.VirtualMachineInstanceReplicaSetStatus {
	st := *old.DeepCopy()
	st.Replicas, st.ReadyReplicas, st.LabelSelector = int32(replicas), int32(ready), selector.String()
	SetConditions(&st, paused, scaleErr, scaledUp, now)
	return st
}

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
