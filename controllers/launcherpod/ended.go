package launcherpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Ended reports whether a launcher Pod has ended: the Pod has a final phase, or its compute
// container has terminated (restartPolicy Never: it will not run again).
func Ended(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == ContainerName && cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// EndMessage says how a launcher Pod ended, from its compute container when it can.
func EndMessage(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != ContainerName || cs.State.Terminated == nil {
			continue
		}
		t := cs.State.Terminated
		msg := fmt.Sprintf("container %s exited with code %d", cs.Name, t.ExitCode)
		if t.Reason != "" {
			msg += " (" + t.Reason + ")"
		}
		if t.Message != "" {
			msg += ": " + t.Message
		}
		return msg
	}
	msg := "Pod phase " + string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		msg += " (" + pod.Status.Reason + ")"
	}
	if pod.Status.Message != "" {
		msg += ": " + pod.Status.Message
	}
	return msg
}
