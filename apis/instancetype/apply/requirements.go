package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// RequirementsMessage prefixes KubeVirt's messages for a VM that does not meet its preference's
// requirements.
const RequirementsMessage = "failure checking preference requirements: "

// Requirements checks that a VM meets the requirements of its preference (nil: none): the
// instancetype's vCPUs and memory when it has one, else those its template (spec, at
// spec.template.spec) gives in the preferred CPU topology; and the architecture. The error
// names the fields that fall short, with KubeVirt's message.
func Requirements(instancetype *v1beta1.VirtualMachineInstancetypeSpec, preference *v1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec) *field.Error {
	if preference == nil || preference.Requirements == nil {
		return nil
	}
	req := preference.Requirements
	if req.CPU != nil {
		if err := cpuRequirement(instancetype, preference, spec); err != nil {
			return err
		}
	}
	if req.Memory != nil {
		if err := memoryRequirement(instancetype, req.Memory.Guest, spec); err != nil {
			return err
		}
	}
	if req.Architecture != nil && spec.Architecture != *req.Architecture {
		return requirementError(templatePath.Child("architecture").String(),
			"preference requires architecture %s but %s is being requested", *req.Architecture, spec.Architecture)
	}
	return nil
}

var (
	templatePath = field.NewPath("spec", "template", "spec")
	cpuPath      = templatePath.Child("domain", "cpu")
)

func cpuRequirement(it *v1beta1.VirtualMachineInstancetypeSpec, pref *v1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec) *field.Error {
	need := pref.Requirements.CPU.Guest
	if it != nil {
		if it.CPU.Guest < need {
			return requirementError("spec.instancetype",
				"insufficient CPU resources of %d vCPU provided by instance type, preference requires %d vCPU", it.CPU.Guest, need)
		}
		return nil
	}
	cpu := spec.Domain.CPU
	if cpu == nil {
		return requirementError(cpuPath.String(), "no CPU resources provided by VirtualMachine, preference requires %d vCPU", need)
	}
	var have uint32
	var fields []string
	var as string
	topology := v1beta1.PreferSockets
	if pref.CPU != nil && pref.CPU.PreferredCPUTopology != nil {
		topology = *pref.CPU.PreferredCPUTopology
	}
	switch topology {
	case v1beta1.PreferThreads, v1beta1.DeprecatedPreferThreads:
		have, fields, as = cpu.Threads, []string{"threads"}, "threads"
	case v1beta1.PreferCores, v1beta1.DeprecatedPreferCores:
		have, fields, as = cpu.Cores, []string{"cores"}, "cores"
	case v1beta1.PreferSockets, v1beta1.DeprecatedPreferSockets:
		have, fields, as = cpu.Sockets, []string{"sockets"}, "sockets"
	case v1beta1.PreferSpread, v1beta1.DeprecatedPreferSpread:
		_, across := spreadOptions(pref)
		as = string(across)
		switch across {
		case v1beta1.SpreadAcrossCoresThreads:
			have, fields = cpu.Cores*cpu.Threads, []string{"cores", "threads"}
		case v1beta1.SpreadAcrossSocketsCoresThreads:
			have, fields = cpu.Sockets*cpu.Cores*cpu.Threads, []string{"sockets", "cores", "threads"}
		default:
			have, fields = cpu.Sockets*cpu.Cores, []string{"sockets", "cores"}
		}
	case v1beta1.PreferAny, v1beta1.DeprecatedPreferAny:
		have, fields, as = cpu.Cores*cpu.Sockets*cpu.Threads, []string{"cores", "sockets", "threads"}, "cores, sockets and threads"
	default:
		return nil
	}
	if have >= need {
		return nil
	}
	return requirementError(joinPaths(cpuPath, fields),
		"insufficient CPU resources of %d vCPU provided by VirtualMachine, preference requires %d vCPU provided as %s", have, need, as)
}

func memoryRequirement(it *v1beta1.VirtualMachineInstancetypeSpec, need resource.Quantity, spec *v1.VirtualMachineInstanceSpec) *field.Error {
	path, by := templatePath.Child("domain", "memory").String(), "VirtualMachine"
	have := resource.MustParse("0Mi")
	if it != nil {
		path, by, have = "spec.instancetype", "instance type", it.Memory.Guest
	}
	if m := spec.Domain.Memory; m != nil && m.Guest != nil {
		have = *m.Guest
	}
	if have.Cmp(need) >= 0 {
		return nil
	}
	return requirementError(path, "insufficient Memory resources of %s provided by %s, preference requires %s", have.String(), by, need.String())
}

// requirementError is KubeVirt's cause: its field lists the paths that fall short, comma-separated.
func requirementError(paths, format string, args ...any) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: paths, BadValue: field.OmitValueType{}, Detail: RequirementsMessage + fmt.Sprintf(format, args...)}
}

func joinPaths(base *field.Path, children []string) string {
	out := ""
	for i, c := range children {
		if i > 0 {
			out += ", "
		}
		out += base.Child(c).String()
	}
	return out
}
