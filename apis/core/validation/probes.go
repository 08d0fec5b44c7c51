package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// validateProbes checks the readiness and liveness probes: one handler each, reachable ports,
// sensible timings; a liveness probe needs successThreshold 1 and a guest that starts running.
func validateProbes(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := spec.ReadinessProbe; p != nil {
		errs = append(errs, validateProbe(spec, p, fldPath.Child("readinessProbe"))...)
	}
	if p := spec.LivenessProbe; p != nil {
		path := fldPath.Child("livenessProbe")
		errs = append(errs, validateProbe(spec, p, path)...)
		if p.SuccessThreshold > 1 {
			errs = append(errs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, "must be 1 for a liveness probe"))
		}
		if s := spec.StartStrategy; s != nil && *s == v1.StartStrategyPaused {
			errs = append(errs, field.Forbidden(path, "a guest started paused (startStrategy: Paused) cannot have a liveness probe: it would fail until the guest is unpaused"))
		}
	}
	return errs
}

func validateProbe(spec *v1.VirtualMachineInstanceSpec, p *v1.Probe, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if p.Exec != nil {
		set = append(set, "exec")
		if len(p.Exec.Command) == 0 || p.Exec.Command[0] == "" {
			errs = append(errs, field.Required(path.Child("exec", "command"), "the program to run in the guest"))
		}
	}
	if p.HTTPGet != nil {
		set = append(set, "httpGet")
		errs = append(errs, validateProbePort(spec, p.HTTPGet.Port, path.Child("httpGet", "port"))...)
		if s := p.HTTPGet.Scheme; s != "" {
			errs = append(errs, fieldcheck.Enum(s, []v1.URIScheme{"HTTP", "HTTPS"}, path.Child("httpGet", "scheme"))...)
		}
		for i, h := range p.HTTPGet.HTTPHeaders {
			if h.Name == "" {
				errs = append(errs, field.Required(path.Child("httpGet", "httpHeaders").Index(i).Child("name"), ""))
			}
		}
	}
	if p.TCPSocket != nil {
		set = append(set, "tcpSocket")
		errs = append(errs, validateProbePort(spec, p.TCPSocket.Port, path.Child("tcpSocket", "port"))...)
	}
	if p.GuestAgentPing != nil {
		set = append(set, "guestAgentPing")
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, "one of exec, httpGet, tcpSocket and guestAgentPing"))
	case 1:
	default:
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("only one of exec, httpGet, tcpSocket and guestAgentPing may be set; %v are", set)))
	}
	for _, t := range []struct {
		name  string
		value int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if t.value < 0 {
			errs = append(errs, field.Invalid(path.Child(t.name), t.value, "must not be negative"))
		}
	}
	return errs
}

// validateProbePort checks a port the kubelet probes at the VMI's address: the guest is reached
// through the pod network, so the VMI needs an interface, and a named port must be one of its
// interface's ports.
func validateProbePort(spec *v1.VirtualMachineInstanceSpec, port intstr.IntOrString, path *field.Path) field.ErrorList {
	ifaces := spec.Domain.Devices.Interfaces
	if len(ifaces) == 0 {
		return field.ErrorList{field.Forbidden(path, "the probe reaches the guest through the pod network, and the VMI has no interface (spec.domain.devices.interfaces)")}
	}
	if port.Type == intstr.String {
		for _, iface := range ifaces {
			for _, p := range iface.Ports {
				if p.Name != "" && p.Name == port.StrVal {
					return nil
				}
			}
		}
		return field.ErrorList{field.Invalid(path, port.StrVal, "no port of that name in spec.domain.devices.interfaces[].ports")}
	}
	if port.IntVal < 1 || port.IntVal > 65535 {
		return field.ErrorList{field.Invalid(path, port.IntVal, "must be a port number from 1 to 65535")}
	}
	return nil
}
