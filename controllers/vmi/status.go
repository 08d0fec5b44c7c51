package vmi

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// OrphanedRunningGrace is how long the controller leaves a Running VMI whose launcher Pod has
// ended to the node agent, which reports how the guest ended; after it, the controller fails
// the VMI itself (the node agent is gone).
const OrphanedRunningGrace = 30 * time.Second

// nextStatus is the VMI's status as the controller sees it given its launcher Pod (nil when
// there is none): the phases Pending -> Scheduling -> Scheduled, and Failed when the Pod fails
// or disappears before the node agent reports the guest's end. It returns, too, how long until
// the status must be looked at again (0: only on change). It is pure: vmi is not modified.
func nextStatus(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, now metav1.Time) (v1.VirtualMachineInstanceStatus, time.Duration) {
	st := *vmi.Status.DeepCopy()
	switch st.Phase {
	case v1.Succeeded, v1.Failed:
		return st, 0
	case v1.VmPhaseUnset, v1.Pending:
		if pod == nil {
			return st, 0
		}
		st.SetPhase(v1.Scheduling, now)
		st.RuntimeUser = launcherpodapi.LauncherUser
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady,
			Status: v1.ConditionFalse, Reason: v1.ReasonGuestNotRunning, Message: "the guest has not started yet"}, now)
		schedulingStatus(&st, vmi, pod, now)
	case v1.Scheduling:
		if pod == nil {
			fail(&st, v1.ReasonPodNotExists, "the launcher Pod was deleted before the VMI was scheduled", now)
			return st, 0
		}
		schedulingStatus(&st, vmi, pod, now)
	case v1.Scheduled, v1.Running:
		return runningStatus(st, pod, now)
	}
	return st, 0
}

// schedulingStatus moves a Scheduling VMI on as its Pod is scheduled and starts.
func schedulingStatus(st *v1.VirtualMachineInstanceStatus, vmi *v1.VirtualMachineInstance, pod *corev1.Pod, now metav1.Time) {
	if launcherpodapi.Ended(pod) {
		fail(st, v1.ReasonPodFailed, "the launcher Pod ended before the guest started: "+launcherpodapi.EndMessage(pod), now)
		return
	}
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePodScheduled,
			Status: v1.ConditionFalse, Reason: c.Reason, Message: c.Message}, now)
		return
	}
	st.RemoveCondition(v1.VirtualMachineInstancePodScheduled)
	imagePullStatus(st, pod, now)
	if !launcherpodapi.Started(pod) {
		return
	}
	st.SetPhase(v1.Scheduled, now)
	st.NodeName = pod.Spec.NodeName
	st.ActivePods = map[types.UID]string{pod.UID: pod.Spec.NodeName}
	for _, c := range pod.Spec.Containers {
		if c.Name == launcherpodapi.ContainerName {
			st.LauncherContainerImageVersion = c.Image
		}
	}
	st.VolumeStatus, st.KernelBootStatus = imageStatus(vmi, pod)
	hardwareStatus(st, vmi, pod)
}

// hardwareStatus records what the guest starts with, as KubeVirt reports it: the launcher Pod's
// QoS class, the machine type, the CPU topology and the memory (the guest's and the Pod's
// overhead on top of it).
func hardwareStatus(st *v1.VirtualMachineInstanceStatus, vmi *v1.VirtualMachineInstance, pod *corev1.Pod) {
	if pod.Status.QOSClass != "" {
		st.QOSClass = new(v1.PodQOSClass(pod.Status.QOSClass))
	}
	d := &vmi.Spec.Domain
	if d.Machine != nil && d.Machine.Type != "" {
		st.Machine = &v1.Machine{Type: d.Machine.Type}
	}
	topology := v1.CPUTopology{Cores: 1, Sockets: 1, Threads: 1}
	if c := d.CPU; c != nil {
		topology.Cores, topology.Sockets, topology.Threads = max(c.Cores, 1), max(c.Sockets, 1), max(c.Threads, 1)
	}
	st.CurrentCPUTopology = &topology
	if d.Memory == nil || d.Memory.Guest == nil {
		return // the API server defaults it from the memory request or limit
	}
	guest := *d.Memory.Guest
	mem := &v1.MemoryStatus{GuestAtBoot: new(guest.DeepCopy()), GuestCurrent: new(guest.DeepCopy()), GuestRequested: new(guest.DeepCopy())}
	for _, c := range pod.Spec.Containers {
		if request, ok := c.Resources.Requests[corev1.ResourceMemory]; c.Name == launcherpodapi.ContainerName && ok && request.Cmp(guest) > 0 {
			request.Sub(guest)
			mem.MemoryOverhead = &request
		}
	}
	st.Memory = mem
}

// imageStatus is the volumeStatus and kernelBootStatus of vmi given its running launcher Pod:
// the digest of each image it mounts (nil where the Pod names none).
func imageStatus(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) ([]v1.VolumeStatus, *v1.KernelBootStatus) {
	running := launcherpod.RunningImages(pod, vmi)
	var volumes []v1.VolumeStatus
	for _, vol := range vmi.Spec.Volumes {
		if ref := running[vol.Name]; vol.ContainerDisk != nil && ref != "" {
			volumes = append(volumes, v1.VolumeStatus{Name: vol.Name, ContainerDiskVolume: &v1.ContainerDiskInfo{ImageID: ref}})
		}
	}
	var kernel *v1.KernelBootStatus
	if ref := running[launcherpodapi.KernelBootVolumeName]; ref != "" {
		kernel = &v1.KernelBootStatus{ImageID: ref}
	}
	return volumes, kernel
}

// imagePullReasons are the kubelet's reasons of a container waiting for an image it cannot
// pull: its own image or one of the Pod's image volumes (containerDisks, kernelBoot).
var imagePullReasons = []string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"}

// imagePullStatus copies the kubelet's reason and message of an image the launcher Pod cannot
// pull into the VMI's Synchronized condition (False), as KubeVirt shows ErrImagePull and
// ImagePullBackOff; once the image is pulled, the condition goes.
func imagePullStatus(st *v1.VirtualMachineInstanceStatus, pod *corev1.Pod, now metav1.Time) {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; cs.Name == launcherpodapi.ContainerName && w != nil && slices.Contains(imagePullReasons, w.Reason) {
			st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized,
				Status: v1.ConditionFalse, Reason: w.Reason, Message: w.Message}, now)
			return
		}
	}
	if c := st.Condition(v1.VirtualMachineInstanceSynchronized); c != nil && slices.Contains(imagePullReasons, c.Reason) {
		st.RemoveCondition(v1.VirtualMachineInstanceSynchronized)
	}
}

// runningStatus watches the launcher Pod of a VMI the node agent owns (Scheduled or Running).
func runningStatus(st v1.VirtualMachineInstanceStatus, pod *corev1.Pod, now metav1.Time) (v1.VirtualMachineInstanceStatus, time.Duration) {
	switch {
	case pod == nil:
		fail(&st, v1.ReasonPodNotExists, "the launcher Pod disappeared while the VMI was "+string(st.Phase), now)
	case pod.DeletionTimestamp != nil && !launcherpodapi.Ended(pod):
		// Its node was to have stopped it by the deletion timestamp; the controller waits
		// OrphanedRunningGrace more, as for a Pod that ended, then takes the node for gone.
		if wait := pod.DeletionTimestamp.Add(OrphanedRunningGrace).Sub(now.Time); wait > 0 {
			return st, wait
		}
		fail(&st, v1.ReasonNodeUnresponsive, fmt.Sprintf("node %s did not stop the launcher Pod %s, which was to be gone by %s: "+
			"the node is down or unreachable, and the guest may still run there", pod.Spec.NodeName, pod.Name,
			pod.DeletionTimestamp.UTC().Format(time.RFC3339)), now)
	case !launcherpodapi.Ended(pod):
	case st.Phase == v1.Scheduled:
		fail(&st, v1.ReasonPodFailed, "the launcher Pod ended before the guest started: "+launcherpodapi.EndMessage(pod), now)
	default:
		// The node agent reports how a running guest ended; the controller steps in only when
		// it has not after a grace period.
		ended := podEndTime(pod)
		if wait := ended.Add(OrphanedRunningGrace).Sub(now.Time); wait > 0 {
			return st, wait
		}
		fail(&st, v1.ReasonLauncherExited, "the launcher Pod ended and no node agent reported the guest's end: "+launcherpodapi.EndMessage(pod), now)
	}
	return st, 0
}

// fail moves the status to Failed with reason.
func fail(st *v1.VirtualMachineInstanceStatus, reason, message string, now metav1.Time) {
	st.SetPhase(v1.Failed, now)
	st.Reason = reason
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady,
		Status: v1.ConditionFalse, Reason: reason, Message: message}, now)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podEndTime is when the launcher container finished, or the Pod's last condition change.
func podEndTime(pod *corev1.Pod) time.Time {
	var ended time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(ended) {
			ended = t.FinishedAt.Time
		}
	}
	if ended.IsZero() {
		for _, c := range pod.Status.Conditions {
			if c.LastTransitionTime.After(ended) {
				ended = c.LastTransitionTime.Time
			}
		}
	}
	return ended
}
