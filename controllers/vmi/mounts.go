package vmi

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// mountGrace is how long a bound launcher Pod may stay Pending before the controller looks for
// the kubelet's FailedMount events (a healthy one starts well within it); mountRecheck is how
// often it looks again while the Pod stays Pending without one.
const (
	mountGrace   = 2 * time.Second
	mountRecheck = 10 * time.Second
)

// stuckSince returns when pod was bound to its node, when it is still Pending there.
func stuckSince(pod *corev1.Pod) (time.Time, bool) {
	if pod == nil || pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodPending || pod.DeletionTimestamp != nil {
		return time.Time{}, false
	}
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time, true
	}
	return pod.CreationTimestamp.Time, true
}

// mountProblem returns the latest FailedMount message of a Scheduling VMI's launcher Pod that
// has stayed Pending on its node beyond mountGrace, and when to look again (0: not needed).
func (c *Controller) mountProblem(ctx context.Context, vmi *v1.VirtualMachineInstance, pod *corev1.Pod) (string, time.Duration) {
	since, stuck := stuckSince(pod)
	if !stuck || vmi.Status.Phase != v1.Scheduling {
		return "", 0
	}
	if wait := since.Add(mountGrace).Sub(c.now().Time); wait > 0 {
		return "", wait
	}
	sel := fields.Set{"involvedObject.uid": string(pod.UID), "reason": v1.ReasonFailedMount}.AsSelector().String()
	events, err := c.kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot list the launcher Pod's events", "pod", klog.KObj(pod), "err", err)
		return "", mountRecheck
	}
	var latest *corev1.Event
	for i := range events.Items {
		e := &events.Items[i]
		if latest == nil || eventTime(e).After(eventTime(latest)) {
			latest = e
		}
	}
	if latest == nil {
		return "", mountRecheck
	}
	return latest.Message, 0
}

// eventTime is when an event last happened.
func eventTime(e *corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// withMountProblem shows a launcher Pod's mount failure on the VMI's Ready condition, and
// takes it back once the problem is gone. It is pure.
func withMountProblem(st *v1.VirtualMachineInstanceStatus, problem string, now metav1.Time) {
	var ready *v1.VirtualMachineInstanceCondition
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.VirtualMachineInstanceReady {
			ready = &st.Conditions[i]
		}
	}
	switch {
	case problem != "" && st.Phase == v1.Scheduling:
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionFalse,
			Reason: v1.ReasonFailedMount, Message: "the launcher Pod cannot start: " + problem}, now)
	case problem == "" && ready != nil && ready.Reason == v1.ReasonFailedMount && (st.Phase == v1.Scheduling || st.Phase == v1.Scheduled):
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady,
			Status: v1.ConditionFalse, Reason: v1.ReasonGuestNotRunning, Message: "the guest has not started yet"}, now)
	}
}
