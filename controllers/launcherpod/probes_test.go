package launcherpod

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestProbesOnTheLauncherContainer(t *testing.T) {
	pod, err := Render(newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "default", Ports: []v1.Port{{Name: "http", Port: 80}, {Port: 53, Protocol: "UDP"}}}}
		vmi.Spec.ReadinessProbe = &v1.Probe{Handler: v1.Handler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("http"), Path: "/healthz"}},
			InitialDelaySeconds: 2, TimeoutSeconds: 1, PeriodSeconds: 3, SuccessThreshold: 1, FailureThreshold: 2}
		vmi.Spec.LivenessProbe = &v1.Probe{Handler: v1.Handler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
			TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3}
	}), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	r := c.ReadinessProbe
	if r == nil || r.HTTPGet == nil || r.HTTPGet.Port != intstr.FromString("http") || r.HTTPGet.Path != "/healthz" ||
		r.InitialDelaySeconds != 2 || r.PeriodSeconds != 3 || r.FailureThreshold != 2 {
		t.Errorf("readiness probe %+v", r)
	}
	l := c.LivenessProbe
	want := []string{"/usr/bin/vireo-launcher", "guest-probe", "--timeout=2s", "--", "cat", "/tmp/healthy"}
	if l == nil || l.Exec == nil || !slices.Equal(l.Exec.Command, want) || l.TimeoutSeconds != 3 || l.InitialDelaySeconds != guestProbeStartupDelay {
		t.Errorf("liveness probe %+v, want exec %q with a 3 s timeout after %d s", l, want, guestProbeStartupDelay)
	}
	wantPorts := []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
	if !slices.Equal(c.Ports, wantPorts) {
		t.Errorf("container ports %+v, want %+v", c.Ports, wantPorts)
	}
}

func TestGuestAgentPingProbe(t *testing.T) {
	p := containerProbe(&v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}, TimeoutSeconds: 1, InitialDelaySeconds: 5})
	want := []string{"/usr/bin/vireo-launcher", "guest-probe", "--timeout=1s", "--guest-agent-ping"}
	if p.Exec == nil || !slices.Equal(p.Exec.Command, want) || p.InitialDelaySeconds != 15 || p.TimeoutSeconds != 2 {
		t.Errorf("guestAgentPing probe %+v, want exec %q", p, want)
	}
}
