package vmi

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestWithMountProblem(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	msg := `MountVolume.SetUp failed for volume "userdata-ci" : secret "missing" not found`
	readyOf := func(st v1.VirtualMachineInstanceStatus) v1.VirtualMachineInstanceCondition {
		for _, c := range st.Conditions {
			if c.Type == v1.VirtualMachineInstanceReady {
				return c
			}
		}
		return v1.VirtualMachineInstanceCondition{}
	}
	st := v1.VirtualMachineInstanceStatus{Phase: v1.Scheduling}
	withMountProblem(&st, msg, now)
	if c := readyOf(st); c.Reason != v1.ReasonFailedMount || c.Status != v1.ConditionFalse || c.Message != "the launcher Pod cannot start: "+msg {
		t.Errorf("Ready with a mount problem = %+v", c)
	}
	st.Phase = v1.Scheduled
	withMountProblem(&st, "", now)
	if c := readyOf(st); c.Reason != v1.ReasonGuestNotRunning {
		t.Errorf("Ready once the Pod started = %+v, want GuestNotRunning", c)
	}
	running := v1.VirtualMachineInstanceStatus{Phase: v1.Running}
	running.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}, now)
	withMountProblem(&running, msg, now)
	if c := readyOf(running); c.Status != v1.ConditionTrue {
		t.Errorf("a Running VMI's Ready changed: %+v", c)
	}
}

func TestStuckSince(t *testing.T) {
	bound := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: bound}}}}
	if since, ok := stuckSince(pod); !ok || !since.Equal(bound.Time) {
		t.Errorf("stuckSince(bound Pending Pod) = %v, %v", since, ok)
	}
	for name, p := range map[string]*corev1.Pod{
		"nil":      nil,
		"unbound":  {Status: corev1.PodStatus{Phase: corev1.PodPending}},
		"running":  {Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		"deleting": {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &bound}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	} {
		if _, ok := stuckSince(p); ok {
			t.Errorf("%s: stuckSince = true", name)
		}
	}
}
