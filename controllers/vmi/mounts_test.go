package vmi

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
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

// The FailedMount message comes from the watched events of the VMI's own Pod, the latest one,
// and only once the Pod has stayed Pending on its node beyond mountGrace.
func TestMountProblemFromWatchedEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	bound := time.Now().Add(-time.Minute)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-demo", UID: "pod-uid"},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(bound)}}}}
	event := func(name, podUID, msg string, at time.Time) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Reason: v1.ReasonFailedMount, Message: msg,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "virt-launcher-x", UID: types.UID(podUID)},
			LastTimestamp:  metav1.NewTime(at)}
	}
	events := []*corev1.Event{event("e1", "pod-uid", "older", bound.Add(time.Second)), event("e2", "pod-uid", "latest", bound.Add(5*time.Second)),
		event("e3", "another-pod", "not ours", bound.Add(9*time.Second))}
	ctrl := startControllerWithEvents(ctx, t, vireofake.NewClientset(), events)
	vmi := libvmi.New(libvmi.InPhase(v1.Scheduling))
	if msg, recheck := ctrl.mountProblem(vmi, pod); msg != "latest" || recheck != 0 {
		t.Errorf("mountProblem = %q, %v; want the latest event of the Pod", msg, recheck)
	}
	fresh := pod.DeepCopy()
	fresh.Status.Conditions[0].LastTransitionTime = metav1.Now()
	if msg, recheck := ctrl.mountProblem(vmi, fresh); msg != "" || recheck <= 0 || recheck > mountGrace {
		t.Errorf("a Pod bound just now: mountProblem = %q, %v; want none yet, a look again within %v", msg, recheck, mountGrace)
	}
	other := pod.DeepCopy()
	other.UID = "quiet-pod"
	if msg, recheck := ctrl.mountProblem(vmi, other); msg != "" || recheck != 0 {
		t.Errorf("a Pod without events: mountProblem = %q, %v; want none, no polling (its events requeue the VMI)", msg, recheck)
	}
}
