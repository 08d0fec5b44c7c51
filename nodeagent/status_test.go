package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

var t0 = metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))

func scheduledVMI(mutate func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "uid-vm"},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Scheduled, NodeName: "n1"}}
	if mutate != nil {
		mutate(vmi)
	}
	return vmi
}

func readyPod(mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-vm-abcde", UID: "pod-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func domain(phase protocol.DomainPhase, reason string) *protocol.DomainStatus {
	return &protocol.DomainStatus{Phase: phase, Reason: reason, Emulation: "tcg", EmulationReason: "no /dev/kvm",
		Interfaces: []protocol.Interface{{Name: "default", MAC: "02:00:00:aa:bb:cc"}}}
}

func TestAccessCredentialsCondition(t *testing.T) {
	now := metav1.Now()
	for _, c := range []struct {
		status     *protocol.CredentialsStatus
		want       v1.ConditionStatus
		wantReason string
	}{
		{nil, "", ""},
		{&protocol.CredentialsStatus{Synced: true}, v1.ConditionTrue, v1.ReasonAccessCredentialsSyncSuccess},
		{&protocol.CredentialsStatus{Message: "no such user"}, v1.ConditionFalse, v1.ReasonAccessCredentialsSyncFailed},
	} {
		dom := domain(protocol.DomainRunning, "")
		dom.AccessCredentials = c.status
		st := nextStatus(scheduledVMI(nil), observation{pod: readyPod(nil), domain: dom}, now)
		got := st.Condition(v1.VirtualMachineInstanceAccessCredentialsSynchronized)
		switch {
		case c.want == "" && got != nil:
			t.Errorf("%+v: condition %+v, want none", c.status, got)
		case c.want != "" && (got == nil || got.Status != c.want || got.Reason != c.wantReason || (c.status != nil && got.Message != c.status.Message)):
			t.Errorf("%+v: condition %+v, want %s/%s", c.status, got, c.want, c.wantReason)
		}
	}
}

// terminated marks a domain status as the launcher's after SIGTERM.
func terminated(d *protocol.DomainStatus) *protocol.DomainStatus {
	d.Terminated = true
	return d
}

func TestNextStatus(t *testing.T) {
	now := metav1.Now()
	deleting := func(vmi *v1.VirtualMachineInstance) { vmi.DeletionTimestamp = &now }
	podDeleting := func(p *corev1.Pod) { p.DeletionTimestamp = &now }
	exited := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}}}
	}
	cases := []struct {
		name       string
		vmi        *v1.VirtualMachineInstance
		obs        observation
		wantPhase  v1.VirtualMachineInstancePhase
		wantReason string
		wantReady  v1.ConditionStatus
	}{
		{name: "not heard from the launcher: unchanged", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil)}, wantPhase: v1.Scheduled},
		{name: "no domain yet: unchanged", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainNone, "")}, wantPhase: v1.Scheduled},
		{name: "running", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, wantPhase: v1.Running, wantReady: v1.ConditionTrue},
		{name: "paused is running, not ready", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainPaused, "")}, wantPhase: v1.Running, wantReady: v1.ConditionFalse},
		{name: "guest powered off", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainSucceeded, "GuestShutdown")}, wantPhase: v1.Succeeded, wantReason: "GuestShutdown", wantReady: v1.ConditionFalse},
		{name: "qemu crashed", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainFailed, "Crashed")}, wantPhase: v1.Failed, wantReason: "Crashed"},
		{name: "the kubelet stopped the launcher (liveness)", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: terminated(domain(protocol.DomainSucceeded, "GuestShutdown"))},
			wantPhase: v1.Failed, wantReason: v1.ReasonLauncherTerminated},
		{name: "deleted VMI shut down, launcher told to stop", vmi: scheduledVMI(deleting), obs: observation{pod: readyPod(podDeleting), domain: terminated(domain(protocol.DomainSucceeded, "GuestShutdown"))},
			wantPhase: v1.Succeeded, wantReason: "GuestShutdown"},
		{name: "deleted VMI shut down", vmi: scheduledVMI(deleting), obs: observation{pod: readyPod(podDeleting), domain: domain(protocol.DomainSucceeded, "Shutdown")}, wantPhase: v1.Succeeded, wantReason: "Shutdown"},
		{name: "launcher pod deleted under the VMI", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(podDeleting), domain: domain(protocol.DomainSucceeded, "Shutdown")}, wantPhase: v1.Failed, wantReason: v1.ReasonLauncherPodDeleted},
		{name: "launcher pod deleted, as the API says", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), podDeleted: true, domain: domain(protocol.DomainFailed, "QEMUCrashed")}, wantPhase: v1.Failed, wantReason: v1.ReasonLauncherPodDeleted},
		{name: "launcher killed", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(exited), domain: domain(protocol.DomainRunning, "")}, wantPhase: v1.Failed, wantReason: v1.ReasonLauncherExited},
		{name: "pod gone", vmi: scheduledVMI(nil), obs: observation{}, wantPhase: v1.Failed, wantReason: v1.ReasonLauncherExited},
		{name: "final is final", vmi: scheduledVMI(func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = v1.Succeeded }), obs: observation{}, wantPhase: v1.Succeeded},
		{name: "sync error is a condition", vmi: scheduledVMI(nil), obs: observation{pod: readyPod(nil), domain: domain(protocol.DomainNone, ""), syncErr: "connection refused", syncReason: v1.ReasonSyncFailed}, wantPhase: v1.Scheduled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := nextStatus(c.vmi, c.obs, t0)
			if st.Phase != c.wantPhase || st.Reason != c.wantReason {
				t.Errorf("phase/reason = %s/%q, want %s/%q", st.Phase, st.Reason, c.wantPhase, c.wantReason)
			}
			if c.wantReady != "" && condition(st, v1.VirtualMachineInstanceReady) != c.wantReady {
				t.Errorf("Ready = %q, want %q", condition(st, v1.VirtualMachineInstanceReady), c.wantReady)
			}
			if c.obs.syncErr != "" && condition(st, v1.VirtualMachineInstanceSynchronized) != v1.ConditionFalse {
				t.Errorf("Synchronized = %q, want False", condition(st, v1.VirtualMachineInstanceSynchronized))
			}
		})
	}
}

func TestRunningStatusReportsInterfacesAndEmulation(t *testing.T) {
	st := nextStatus(scheduledVMI(nil), observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, t0)
	if len(st.Interfaces) != 1 || st.Interfaces[0].IP != "10.244.0.7" || st.Interfaces[0].MAC != "02:00:00:aa:bb:cc" || st.Interfaces[0].Name != "default" {
		t.Errorf("interfaces = %+v", st.Interfaces)
	}
	if condition(st, v1.VirtualMachineInstanceSoftwareEmulation) != v1.ConditionTrue {
		t.Errorf("SoftwareEmulation = %q", condition(st, v1.VirtualMachineInstanceSoftwareEmulation))
	}
	again := nextStatus(&v1.VirtualMachineInstance{Status: st}, observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, metav1.NewTime(t0.Add(time.Hour)))
	if len(again.PhaseTransitionTimestamps) != len(st.PhaseTransitionTimestamps) || again.Conditions[0].LastTransitionTime != st.Conditions[0].LastTransitionTime {
		t.Error("an unchanged observation changed the status (a needless write)")
	}
}

func condition(st v1.VirtualMachineInstanceStatus, t v1.VirtualMachineInstanceConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// TestPausedCondition: a user's pause shows as Paused True with KubeVirt's reason and message; a
// pause of Vireo's own (no reason) does not; unpausing or ending removes it.
func TestPausedCondition(t *testing.T) {
	running := nextStatus(scheduledVMI(nil), observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, t0)
	vmi := scheduledVMI(func(v *v1.VirtualMachineInstance) { v.Status = running })
	paused := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainPaused, protocol.PausedByUser)}, t0)
	c := findCondition(paused, v1.VirtualMachineInstancePaused)
	if c == nil || c.Status != v1.ConditionTrue || c.Reason != "PausedByUser" || c.Message != "VMI was paused by user" {
		t.Errorf("Paused condition of a paused guest: %+v", c)
	}
	if condition(paused, v1.VirtualMachineInstanceReady) != v1.ConditionFalse {
		t.Error("a paused guest is Ready")
	}
	migrating := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainPaused, "")}, t0)
	if findCondition(migrating, v1.VirtualMachineInstancePaused) != nil {
		t.Error("a pause without a reason (Vireo's own) shows as Paused")
	}
	vmi.Status = paused
	if st := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, t0); findCondition(st, v1.VirtualMachineInstancePaused) != nil {
		t.Error("the Paused condition stayed after unpause")
	}
	if st := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainFailed, "QEMUCrashed")}, t0); findCondition(st, v1.VirtualMachineInstancePaused) != nil {
		t.Error("the Paused condition stayed on a Failed VMI")
	}
}

// TestAgentConnectedCondition: AgentConnected is True while the launcher reports the guest
// agent's channel open, and goes when it closes or the guest ends.
func TestAgentConnectedCondition(t *testing.T) {
	withAgent := domain(protocol.DomainRunning, "")
	withAgent.AgentConnected = true
	st := nextStatus(scheduledVMI(nil), observation{pod: readyPod(nil), domain: withAgent}, t0)
	if c := findCondition(st, v1.VirtualMachineInstanceAgentConnected); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("AgentConnected of a guest whose agent connected: %+v", c)
	}
	vmi := scheduledVMI(func(v *v1.VirtualMachineInstance) { v.Status = st })
	if st := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainRunning, "")}, t0); findCondition(st, v1.VirtualMachineInstanceAgentConnected) != nil {
		t.Error("AgentConnected stayed after the agent disconnected")
	}
	if st := nextStatus(vmi, observation{pod: readyPod(nil), domain: domain(protocol.DomainSucceeded, "GuestShutdown")}, t0); findCondition(st, v1.VirtualMachineInstanceAgentConnected) != nil {
		t.Error("AgentConnected stayed on a VMI that ended")
	}
}

func findCondition(st v1.VirtualMachineInstanceStatus, t v1.VirtualMachineInstanceConditionType) *v1.VirtualMachineInstanceCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}
