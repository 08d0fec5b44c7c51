package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestProbeValidation(t *testing.T) {
	withHTTPPort := func(s *v1.VirtualMachineInstanceSpec) {
		s.Domain.Devices.Interfaces[0].Ports = []v1.Port{{Name: "http", Port: 80}}
	}
	readiness := func(p v1.Probe, more ...func(*v1.VirtualMachineInstanceSpec)) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			for _, m := range more {
				m(s)
			}
			s.ReadinessProbe = &p
		}
	}
	liveness := func(p v1.Probe) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.LivenessProbe = &p }
	}
	httpGet := func(port intstr.IntOrString) v1.Handler {
		return v1.Handler{HTTPGet: &v1.HTTPGetAction{Port: port}}
	}
	ping := v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}
	const r, l = "spec.readinessProbe", "spec.livenessProbe"
	runSpecCases(t, []specCase{
		{name: "httpGet by number", mutate: readiness(v1.Probe{Handler: httpGet(intstr.FromInt32(80))})},
		{name: "httpGet by name", mutate: readiness(v1.Probe{Handler: httpGet(intstr.FromString("http"))}, withHTTPPort)},
		{name: "tcpSocket", mutate: readiness(v1.Probe{Handler: v1.Handler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(22)}}})},
		{name: "exec", mutate: liveness(v1.Probe{Handler: v1.Handler{Exec: &v1.ExecAction{Command: []string{"true"}}}})},
		{name: "guestAgentPing", mutate: liveness(v1.Probe{Handler: ping, SuccessThreshold: 1})},
		{name: "no handler", mutate: readiness(v1.Probe{}), want: []fe{{required, r}}},
		{name: "two handlers", mutate: readiness(v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}, TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(22)}}}),
			want: []fe{{forbidden, r}}},
		{name: "unknown port name", mutate: readiness(v1.Probe{Handler: httpGet(intstr.FromString("web"))}, withHTTPPort),
			want: []fe{{invalid, r + ".httpGet.port"}}},
		{name: "port out of range", mutate: readiness(v1.Probe{Handler: httpGet(intstr.FromInt32(70000))}), want: []fe{{invalid, r + ".httpGet.port"}}},
		{name: "httpGet without an interface", mutate: readiness(v1.Probe{Handler: httpGet(intstr.FromInt32(80))}, setNetworking(nil)),
			want: []fe{{forbidden, r + ".httpGet.port"}}},
		{name: "bad scheme", mutate: readiness(v1.Probe{Handler: v1.Handler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80), Scheme: "FTP"}}}),
			want: []fe{{notSupported, r + ".httpGet.scheme"}}},
		{name: "empty exec", mutate: readiness(v1.Probe{Handler: v1.Handler{Exec: &v1.ExecAction{}}}), want: []fe{{required, r + ".exec.command"}}},
		{name: "negative period", mutate: readiness(v1.Probe{Handler: ping, PeriodSeconds: -1}), want: []fe{{invalid, r + ".periodSeconds"}}},
		{name: "liveness success threshold", mutate: liveness(v1.Probe{Handler: ping, SuccessThreshold: 2}), want: []fe{{invalid, l + ".successThreshold"}}},
		{name: "liveness on a paused start", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.StartStrategy = ptr.To(v1.StartStrategyPaused)
			s.LivenessProbe = &v1.Probe{Handler: ping}
		}, want: []fe{{forbidden, l}}},
	})
}
