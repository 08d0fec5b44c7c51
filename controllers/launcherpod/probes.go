package launcherpod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// guestProbeStartupDelay is what exec and guestAgentPing probes wait beyond their own initial
// delay, for the launcher and libvirt to start (KubeVirt's 10 s).
const guestProbeStartupDelay = 10

// launcherBinary is the launcher's path in its image, which the kubelet execs for guest probes.
const launcherBinary = "/usr/bin/vireo-launcher"

// withProbes gives the launcher container the VMI's probes, which the kubelet runs: httpGet and
// tcpSocket as they are, at the Pod's address (the guest's, through its masquerade interface),
// exec and guestAgentPing as an exec of "vireo-launcher guest-probe", which asks the launcher to
// run them through the guest agent. The readiness probe so decides the Pod's readiness and with
// it the VMI's Ready condition; a failed liveness probe makes the kubelet stop the launcher,
// which ends the VMI. The interface's ports become container ports, so that probes may name
// them.
func withProbes(c *corev1.Container, vmi *v1.VirtualMachineInstance) {
	c.ReadinessProbe = containerProbe(vmi.Spec.ReadinessProbe)
	c.LivenessProbe = containerProbe(vmi.Spec.LivenessProbe)
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		for _, p := range iface.Ports {
			proto := corev1.ProtocolTCP
			if p.Protocol == "UDP" || p.Protocol == "udp" {
				proto = corev1.ProtocolUDP
			}
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: proto})
		}
	}
}

// containerProbe is the kubelet's form of a VMI probe (nil for none).
func containerProbe(p *v1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	out := &corev1.Probe{
		InitialDelaySeconds: p.InitialDelaySeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		PeriodSeconds:       p.PeriodSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	switch {
	case p.HTTPGet != nil:
		h := p.HTTPGet
		out.HTTPGet = &corev1.HTTPGetAction{Path: h.Path, Port: h.Port, Host: h.Host, Scheme: corev1.URIScheme(h.Scheme)}
		for _, hh := range h.HTTPHeaders {
			out.HTTPGet.HTTPHeaders = append(out.HTTPGet.HTTPHeaders, corev1.HTTPHeader{Name: hh.Name, Value: hh.Value})
		}
	case p.TCPSocket != nil:
		out.TCPSocket = &corev1.TCPSocketAction{Port: p.TCPSocket.Port, Host: p.TCPSocket.Host}
	case p.Exec != nil || p.GuestAgentPing != nil:
		timeout := max(p.TimeoutSeconds, 1)
		cmd := []string{launcherBinary, "guest-probe", "--timeout=" + strconv.Itoa(int(timeout)) + "s"}
		if p.GuestAgentPing != nil {
			cmd = append(cmd, "--guest-agent-ping")
		} else {
			cmd = append(append(cmd, "--"), p.Exec.Command...)
		}
		out.Exec = &corev1.ExecAction{Command: cmd}
		// Reaching the launcher and the agent adds to the guest's own time (KubeVirt adds 1 s).
		out.TimeoutSeconds = timeout + 1
		out.InitialDelaySeconds += guestProbeStartupDelay
	}
	return out
}
