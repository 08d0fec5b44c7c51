package nodeagent

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// observation is what the node agent knows about one VMI's launcher.
type observation struct {
	// pod is the launcher Pod (nil when gone).
	pod *corev1.Pod
	// podDeleted: the launcher Pod is being deleted, as the API says when the cache lags.
	podDeleted bool
	// domain is the launcher's last reported status (nil when never heard from).
	domain *protocol.DomainStatus
	// syncErr is the last error handing the VMI to the launcher ("" after success).
	syncErr    string
	syncReason string
}

// nextStatus is the VMI's status given what the node agent observed. The node agent owns the
// phases from Scheduled on: Running, and Succeeded or Failed when the guest or its launcher ends.
// It never moves a VMI backwards and changes nothing without evidence: a launcher it has not
// heard from yet leaves the status as it is.
func nextStatus(vmi *v1.VirtualMachineInstance, obs observation, now metav1.Time) v1.VirtualMachineInstanceStatus {
	st := *vmi.Status.DeepCopy()
	if st.Phase != v1.Scheduled && st.Phase != v1.Running {
		return st
	}
	syncCondition(&st, obs, now)
	dom := obs.domain
	switch {
	case dom != nil && dom.Phase == protocol.DomainMigrated:
		// The guest runs on in the migration's target; the migration's report says so.
	case dom != nil && dom.Phase.Ended():
		endedStatus(&st, vmi, obs, now)
	case launcherEnded(obs.pod):
		end(&st, v1.Failed, v1.ReasonLauncherExited, "the launcher ended before reporting its guest's end: "+podEndMessage(obs.pod), now)
	case dom != nil && dom.Phase != protocol.DomainNone:
		runningStatus(&st, obs, now)
	}
	return st
}

// endedStatus is the final phase of a VMI whose domain ended.
func endedStatus(st *v1.VirtualMachineInstanceStatus, vmi *v1.VirtualMachineInstance, obs observation, now metav1.Time) {
	dom := obs.domain
	switch {
	case vmi.DeletionTimestamp != nil && dom.Phase == protocol.DomainSucceeded:
		end(st, v1.Succeeded, dom.Reason, dom.Message, now)
	case (obs.podDeleted || obs.pod != nil && obs.pod.DeletionTimestamp != nil) && vmi.DeletionTimestamp == nil:
		end(st, v1.Failed, v1.ReasonLauncherPodDeleted, "the launcher Pod was deleted, and the guest with it ("+dom.Message+")", now)
	case dom.Phase == protocol.DomainSucceeded && dom.Terminated && vmi.DeletionTimestamp == nil:
		// Neither the VMI nor its Pod was deleted, yet the launcher was told to stop: the kubelet
		// stopped it, after a failed liveness probe or to evict the Pod. KubeVirt: Failed.
		end(st, v1.Failed, v1.ReasonLauncherTerminated, terminatedMessage(vmi, dom), now)
	case dom.Phase == protocol.DomainSucceeded:
		end(st, v1.Succeeded, dom.Reason, dom.Message, now)
	default:
		end(st, v1.Failed, dom.Reason, dom.Message, now)
	}
}

// terminatedMessage says why a guest the kubelet stopped ended.
func terminatedMessage(vmi *v1.VirtualMachineInstance, dom *protocol.DomainStatus) string {
	why := "the kubelet stopped the launcher while neither the VMI nor its Pod was deleted (the node evicted the Pod)"
	if vmi.Spec.LivenessProbe != nil {
		why = "the kubelet stopped the launcher: the VMI's liveness probe failed (see the launcher Pod's events), or the node evicted the Pod"
	}
	return why + "; " + dom.Message
}

// runningStatus is the status of a VMI whose guest runs (or is paused or shutting down).
func runningStatus(st *v1.VirtualMachineInstanceStatus, obs observation, now metav1.Time) {
	st.SetPhase(v1.Running, now)
	st.Reason = ""
	var ips []string
	if obs.pod != nil {
		for _, ip := range obs.pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
	}
	ifaces := make([]v1.VirtualMachineInstanceNetworkInterface, 0, len(obs.domain.Interfaces))
	for _, i := range obs.domain.Interfaces {
		iface := v1.VirtualMachineInstanceNetworkInterface{Name: i.Name, MAC: i.MAC, InfoSource: "domain", InterfaceName: i.GuestName}
		if i.GuestName != "" {
			iface.InfoSource = "domain, guest-agent"
		}
		if len(ips) > 0 {
			iface.IP, iface.IPs = ips[0], slices.Clone(ips)
		}
		ifaces = append(ifaces, iface)
	}
	st.Interfaces = ifaces
	if len(st.Interfaces) == 0 {
		st.Interfaces = nil
	}
	ready := v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}
	switch {
	case obs.domain.Phase != protocol.DomainRunning:
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, v1.ReasonGuestNotRunning, "the guest is "+string(obs.domain.Phase)
	case obs.pod == nil || !podReady(obs.pod):
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, v1.ReasonPodNotReady, "the launcher Pod is not Ready"
	}
	st.SetCondition(ready, now)
	pausedCondition(st, obs.domain, now)
	agentCondition(st, obs.domain, now)
	credentialsCondition(st, obs.domain, now)
	if g := obs.domain.GuestOS; g != nil {
		st.GuestOSInfo = *g
	}
	st.FSFreezeStatus = ""
	if obs.domain.Frozen {
		st.FSFreezeStatus = "frozen"
	}
	if obs.domain.Emulation == "tcg" {
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSoftwareEmulation,
			Status: v1.ConditionTrue, Reason: v1.ReasonSoftwareEmulation, Message: obs.domain.EmulationReason}, now)
	} else {
		st.RemoveCondition(v1.VirtualMachineInstanceSoftwareEmulation)
	}
}

// pausedMessages are KubeVirt's messages of the Paused condition, by reason.
var pausedMessages = map[string]string{
	protocol.PausedByUser:  "VMI was paused by user",
	protocol.PausedIOError: "VMI was paused, low-level IO error detected",
}

// pausedCondition is True while a user or an I/O error paused the guest.
func pausedCondition(st *v1.VirtualMachineInstanceStatus, dom *protocol.DomainStatus, now metav1.Time) {
	if dom.Phase != protocol.DomainPaused || dom.Reason == "" {
		st.RemoveCondition(v1.VirtualMachineInstancePaused)
		return
	}
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePaused,
		Status: v1.ConditionTrue, Reason: dom.Reason, Message: pausedMessages[dom.Reason]}, now)
}

// agentCondition is KubeVirt's AgentConnected: True while the guest agent has its channel
// open, absent otherwise.
func agentCondition(st *v1.VirtualMachineInstanceStatus, dom *protocol.DomainStatus, now metav1.Time) {
	if !dom.AgentConnected {
		st.RemoveCondition(v1.VirtualMachineInstanceAgentConnected)
		return
	}
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAgentConnected, Status: v1.ConditionTrue}, now)
}

// credentialsCondition is KubeVirt's AccessCredentialsSynchronized: whether the guest agent
// applied the VMI's qemuGuestAgent access credentials; absent until the launcher tried.
func credentialsCondition(st *v1.VirtualMachineInstanceStatus, dom *protocol.DomainStatus, now metav1.Time) {
	c := dom.AccessCredentials
	switch {
	case c == nil:
		st.RemoveCondition(v1.VirtualMachineInstanceAccessCredentialsSynchronized)
	case c.Synced:
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAccessCredentialsSynchronized,
			Status: v1.ConditionTrue, Reason: v1.ReasonAccessCredentialsSyncSuccess}, now)
	default:
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceAccessCredentialsSynchronized,
			Status: v1.ConditionFalse, Reason: v1.ReasonAccessCredentialsSyncFailed, Message: c.Message}, now)
	}
}

// syncCondition reports a failure to hand the VMI to its launcher as Synchronized False.
func syncCondition(st *v1.VirtualMachineInstanceStatus, obs observation, now metav1.Time) {
	if obs.syncErr == "" {
		st.RemoveCondition(v1.VirtualMachineInstanceSynchronized)
		return
	}
	reason := obs.syncReason
	if reason == "" {
		reason = v1.ReasonSyncFailed
	}
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized,
		Status: v1.ConditionFalse, Reason: reason, Message: obs.syncErr}, now)
}

// end moves the VMI to a final phase.
func end(st *v1.VirtualMachineInstanceStatus, phase v1.VirtualMachineInstancePhase, reason, message string, now metav1.Time) {
	st.SetPhase(phase, now)
	st.Reason = reason
	st.RemoveCondition(v1.VirtualMachineInstancePaused)
	st.RemoveCondition(v1.VirtualMachineInstanceAgentConnected)
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady,
		Status: v1.ConditionFalse, Reason: v1.ReasonGuestNotRunning, Message: message}, now)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// launcherEnded reports whether the launcher Pod is gone or has ended.
func launcherEnded(pod *corev1.Pod) bool {
	return pod == nil || launcherpodapi.Ended(pod)
}

// podEndMessage says how the launcher Pod ended.
func podEndMessage(pod *corev1.Pod) string {
	if pod == nil {
		return "its Pod is gone"
	}
	return launcherpodapi.EndMessage(pod)
}
