package vmi

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// mountGrace is how long a bound launcher Pod may stay Pending before the controller shows
// the kubelet's FailedMount events on its VMI (a healthy one starts well within it).
const mountGrace = 2 * time.Second

// podUIDIndex indexes the FailedMount events by the UID of the Pod they are about.
const podUIDIndex = "involvedObject.uid"

// FailedMountSelector is the field selector of the events informer New takes: the kubelet's
// FailedMount events only. One watch replaces a list of a Pod's events per starting VMI,
// which at scale (thousands of launcher Pods starting) kube-apiserver answers by scanning
// every event of the namespace.
const FailedMountSelector = "reason=" + v1.ReasonFailedMount

func indexByPodUID(obj any) ([]string, error) {
	if e, ok := obj.(*corev1.Event); ok && e.InvolvedObject.Kind == "Pod" {
		return []string{string(e.InvolvedObject.UID)}, nil
	}
	return nil, nil
}

// enqueueVMIOfEvent queues the VMI whose launcher Pod a FailedMount event is about.
func (c *Controller) enqueueVMIOfEvent(obj any) {
	e, ok := obj.(*corev1.Event)
	if !ok || e.InvolvedObject.Kind != "Pod" {
		return
	}
	pod, err := c.pods.Pods(e.InvolvedObject.Namespace).Get(e.InvolvedObject.Name)
	if err != nil {
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "VirtualMachineInstance" {
		c.EnqueueKey(pod.Namespace + "/" + ref.Name)
	}
}

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
// has stayed Pending on its node beyond mountGrace, and when to look again (0: not needed; a
// FailedMount event of the Pod requeues the VMI).
func (c *Controller) mountProblem(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) (string, time.Duration) {
	since, stuck := stuckSince(pod)
	if !stuck || vmi.Status.Phase != v1.Scheduling {
		return "", 0
	}
	if wait := since.Add(mountGrace).Sub(c.now().Time); wait > 0 {
		return "", wait
	}
	if latest := latestEvent(c.failedMounts, pod.UID); latest != nil {
		return latest.Message, 0
	}
	return "", 0
}

// latestEvent is the latest of the events about the Pod with uid in indexer (by podUIDIndex).
func latestEvent(indexer cache.Indexer, uid types.UID) *corev1.Event {
	objs, err := indexer.ByIndex(podUIDIndex, string(uid))
	if err != nil {
		return nil
	}
	var latest *corev1.Event
	for _, obj := range objs {
		if e, ok := obj.(*corev1.Event); ok && (latest == nil || eventTime(e).After(eventTime(latest))) {
			latest = e
		}
	}
	return latest
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
