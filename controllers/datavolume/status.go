package datavolume

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/importer/importerapi"
)

// ProgressUnknown is a progress that cannot be told (CDI's "N/A").
const ProgressUnknown cdiv1beta1.DataVolumeProgress = "N/A"

// observation is what the controller found for a DataVolume.
type observation struct {
	// claim is the DataVolume's claim, nil before it is created.
	claim *corev1.PersistentVolumeClaim
	// waitForFirstConsumer: the claim's storage class binds volumes only for a Pod using them.
	waitForFirstConsumer bool
	// pod is the importer Pod, nil when there is none.
	pod *corev1.Pod
	// progress is the importer's last reported progress, empty when unknown.
	progress cdiv1beta1.DataVolumeProgress
	// sourceFailed is the permanent failure of a cross-namespace clone's source Pod.
	sourceFailed string
}

// ended says whether a status is final: nothing more is created for the DataVolume.
func ended(st *cdiv1beta1.DataVolumeStatus) bool {
	return st.Phase == cdiv1beta1.Succeeded || st.Phase == cdiv1beta1.Failed
}

// nextStatus computes dv's status from what was observed. A final phase stays as it is.
func nextStatus(dv *cdiv1beta1.DataVolume, obs observation, now metav1.Time) cdiv1beta1.DataVolumeStatus {
	st := *dv.Status.DeepCopy()
	if ended(&st) {
		return st
	}
	if st.Progress == "" {
		st.Progress = ProgressUnknown
	}
	claim := obs.claim
	switch {
	case claim == nil:
		st.Phase = cdiv1beta1.Pending
		setCondition(&st, cdiv1beta1.DataVolumeBound, cdiv1beta1.ConditionFalse, "Pending", "the PersistentVolumeClaim is being created", now)
	case claim.Status.Phase == corev1.ClaimLost:
		st.ClaimName = claim.Name
		st.Phase = cdiv1beta1.Failed
		setCondition(&st, cdiv1beta1.DataVolumeBound, cdiv1beta1.ConditionFalse, "ClaimLost", fmt.Sprintf("PVC %s lost its volume", claim.Name), now)
	case claim.Status.Phase != corev1.ClaimBound:
		st.ClaimName = claim.Name
		st.Phase = cdiv1beta1.Pending
		reason := "Pending"
		if obs.waitForFirstConsumer {
			st.Phase, reason = cdiv1beta1.WaitForFirstConsumer, "WaitForFirstConsumer"
		}
		setCondition(&st, cdiv1beta1.DataVolumeBound, cdiv1beta1.ConditionFalse, reason, fmt.Sprintf("PVC %s Pending", claim.Name), now)
	default:
		st.ClaimName = claim.Name
		st.Phase = cdiv1beta1.PVCBound
		setCondition(&st, cdiv1beta1.DataVolumeBound, cdiv1beta1.ConditionTrue, "Bound", fmt.Sprintf("PVC %s Bound", claim.Name), now)
	}
	// Once bound or waiting for its first consumer, the importer Pod tells the rest.
	if obs.pod != nil && (st.Phase == cdiv1beta1.PVCBound || st.Phase == cdiv1beta1.WaitForFirstConsumer) {
		importStatus(&st, obs.pod, kindOf(dv), obs.progress, now)
	}
	if obs.sourceFailed != "" && st.Phase != cdiv1beta1.Succeeded {
		st.Phase = cdiv1beta1.Failed
		setCondition(&st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Error", obs.sourceFailed, now)
	}
	if st.Phase != cdiv1beta1.Succeeded {
		ready := "TransferRunning"
		if st.Phase == cdiv1beta1.Failed {
			ready = "Failed"
		}
		setCondition(&st, cdiv1beta1.DataVolumeReady, cdiv1beta1.ConditionFalse, ready, "", now)
	}
	if findCondition(&st, cdiv1beta1.DataVolumeRunning) == nil {
		setCondition(&st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Pending", "no importer is running yet", now)
	}
	return st
}

// sourceKind is what the importer Pod does: import, clone or receive an upload (CDI names the
// phases after it).
type sourceKind int

const (
	sourceImport sourceKind = iota
	sourceClone
	sourceUpload
)

func kindOf(dv *cdiv1beta1.DataVolume) sourceKind {
	switch src := dv.Spec.Source; {
	case src != nil && src.PVC != nil:
		return sourceClone
	case src != nil && src.Upload != nil:
		return sourceUpload
	}
	return sourceImport
}

// importStatus reads the importer Pod into the status: phase (CDI's Clone and Upload phases),
// progress, restarts, Running.
func importStatus(st *cdiv1beta1.DataVolumeStatus, pod *corev1.Pod, source sourceKind, progress cdiv1beta1.DataVolumeProgress, now metav1.Time) {
	var cs *corev1.ContainerStatus
	if len(pod.Status.ContainerStatuses) > 0 {
		cs = &pod.Status.ContainerStatuses[0]
		st.RestartCount = cs.RestartCount
	}
	if progress != "" {
		st.Progress = progress
	}
	scheduled, inProgress := cdiv1beta1.ImportScheduled, cdiv1beta1.ImportInProgress
	switch source {
	case sourceClone:
		scheduled, inProgress = cdiv1beta1.CloneScheduled, cdiv1beta1.CloneInProgress
	case sourceUpload:
		scheduled, inProgress = cdiv1beta1.UploadScheduled, cdiv1beta1.UploadReady
	}
	st.Phase = scheduled
	switch failed := permanentFailure(cs); {
	case pod.Status.Phase == corev1.PodSucceeded:
		st.Phase, st.Progress = cdiv1beta1.Succeeded, "100.0%"
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Completed", "Import Complete", now)
		setCondition(st, cdiv1beta1.DataVolumeReady, cdiv1beta1.ConditionTrue, "Completed", "", now)
	case failed != nil:
		st.Phase = cdiv1beta1.Failed
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Error", lastLine(failed.Message), now)
	case pod.Status.Phase == corev1.PodFailed:
		st.Phase = cdiv1beta1.Failed
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Error", podMessage(pod), now)
	case cs != nil && cs.State.Running != nil:
		st.Phase = inProgress
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionTrue, "Pod is running", "", now)
	case cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 && source != sourceUpload:
		// Done, and the kubelet has not yet said the Pod succeeded: still in progress (falling
		// back to Scheduled would show the import going backwards). An upload server that
		// ended is not ready for another upload: it stays Scheduled.
		st.Phase = inProgress
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Completed", "", now)
	case cs != nil && cs.LastTerminationState.Terminated != nil:
		// Failed transiently and waiting to be restarted: still in progress.
		st.Phase = inProgress
		t := cs.LastTerminationState.Terminated
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Error", lastLine(t.Message), now)
	case cs != nil && cs.State.Waiting != nil:
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, cs.State.Waiting.Reason, cs.State.Waiting.Message, now)
	default:
		setCondition(st, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Pending", podMessage(pod), now)
	}
}

// permanentFailure is the importer's run that ended with importerapi.ExitPermanent (a failure that
// retrying cannot mend), current or last; other failures are retried by the Pod's restarts.
func permanentFailure(cs *corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if cs == nil {
		return nil
	}
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t != nil && t.ExitCode == importerapi.ExitPermanent {
			return t
		}
	}
	return nil
}

// lastLine is a termination message's last line: the importer's log ends with its plain error
// message, and with FallbackToLogsOnError the message is the log's tail.
func lastLine(msg string) string {
	msg = strings.TrimRight(msg, "\n")
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		return msg[i+1:]
	}
	return msg
}

// podMessage is the Pod's own explanation, if any (such as the scheduler's).
func podMessage(pod *corev1.Pod) string {
	if pod.Status.Message != "" {
		return pod.Status.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return c.Message
		}
	}
	return ""
}

func findCondition(st *cdiv1beta1.DataVolumeStatus, t cdiv1beta1.DataVolumeConditionType) *cdiv1beta1.DataVolumeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setCondition sets a condition, keeping its times when nothing about it changed.
func setCondition(st *cdiv1beta1.DataVolumeStatus, t cdiv1beta1.DataVolumeConditionType, status cdiv1beta1.ConditionStatus, reason, message string, now metav1.Time) {
	c := findCondition(st, t)
	if c == nil {
		st.Conditions = append(st.Conditions, cdiv1beta1.DataVolumeCondition{Type: t})
		c = &st.Conditions[len(st.Conditions)-1]
	}
	if c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	if c.Status != status {
		c.LastTransitionTime = now
	}
	c.Status, c.Reason, c.Message, c.LastHeartbeatTime = status, reason, message, now
}

// statusChanged says whether a status write is needed.
func statusChanged(a, b *cdiv1beta1.DataVolumeStatus) bool {
	return !apiequality.Semantic.DeepEqual(a, b)
}
