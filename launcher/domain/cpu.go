package domain

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// CPU models with a meaning of their own in spec.domain.cpu.model.
const (
	cpuHostModel       = "host-model"
	cpuHostPassthrough = "host-passthrough"
)

// maxVCPUs is the most vCPUs a guest may have (the API server's limit).
const maxVCPUs = 512

// cpuModelPattern is what a named QEMU CPU model looks like, such as "Skylake-Server-v4".
var cpuModelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// mib is a mebibyte in bytes.
const mib = 1 << 20

// cpu returns the vCPU count and the <cpu> element: topology and model.
//
// Models: with KVM an empty model is host-model (KubeVirt's default), and host-model,
// host-passthrough and named models are passed to libvirt. Under TCG, an empty model and
// host-model become libvirt's "maximum" mode (QEMU's -cpu max: every feature TCG can emulate,
// the same on every node with the same QEMU, so migratable); it lets guests that need
// x86-64-v2 or later boot, where QEMU's default qemu64 would not. host-passthrough means the
// host's own CPU, which TCG cannot provide, so it is refused. A named model is passed through;
// libvirt refuses at start a model TCG cannot emulate.
func cpu(domain *v1.DomainSpec, emulation Emulation, domainPath *field.Path) (*libvirtxml.DomainVCPU, *libvirtxml.DomainCPU, field.ErrorList) {
	cpuPath := domainPath.Child("cpu")
	var errs field.ErrorList
	c := domain.CPU
	if c == nil {
		c = &v1.CPU{}
	}
	sockets, cores, threads := atLeastOne(c.Sockets), atLeastOne(c.Cores), atLeastOne(c.Threads)
	if sockets > maxVCPUs || cores > maxVCPUs || threads > maxVCPUs || sockets*cores*threads > maxVCPUs {
		errs = append(errs, field.Invalid(cpuPath, fmt.Sprintf("sockets=%d, cores=%d, threads=%d", sockets, cores, threads),
			fmt.Sprintf("sockets × cores × threads may be at most %d vCPUs", maxVCPUs)))
		sockets, cores, threads = 1, 1, 1
	}
	if c.DedicatedCPUPlacement {
		errs = append(errs, field.Forbidden(cpuPath.Child("dedicatedCpuPlacement"),
			"Vireo's launcher does not pin vCPUs to dedicated CPUs yet; remove dedicatedCpuPlacement"))
	}
	if c.IsolateEmulatorThread {
		errs = append(errs, field.Forbidden(cpuPath.Child("isolateEmulatorThread"),
			"Vireo's launcher does not isolate the emulator thread yet; remove isolateEmulatorThread"))
	}
	out := &libvirtxml.DomainCPU{
		Topology: &libvirtxml.DomainCPUTopology{Sockets: int(sockets), Dies: 1, Cores: int(cores), Threads: int(threads)},
	}
	errs = append(errs, cpuModel(out, c.Model, emulation, cpuPath.Child("model"))...)
	vcpu := &libvirtxml.DomainVCPU{Placement: "static", Value: uint(sockets * cores * threads)}
	return vcpu, out, errs
}

// cpuModel sets the mode and model of out for the VMI's CPU model (see cpu).
func cpuModel(out *libvirtxml.DomainCPU, model string, emulation Emulation, modelPath *field.Path) field.ErrorList {
	switch {
	case emulation == EmulationTCG && (model == "" || model == cpuHostModel):
		out.Mode, out.Migratable = "maximum", "on"
	case emulation == EmulationTCG && model == cpuHostPassthrough:
		return field.ErrorList{field.Invalid(modelPath, model,
			"host-passthrough needs hardware virtualization (KVM), and this node runs guests under software "+
				"emulation (TCG); leave the model empty, use host-model, or name a QEMU CPU model such as Westmere")}
	case model == "" || model == cpuHostModel:
		out.Mode = cpuHostModel
	case model == cpuHostPassthrough:
		out.Mode = cpuHostPassthrough
	case !cpuModelPattern.MatchString(model):
		return field.ErrorList{field.Invalid(modelPath, model,
			"must be host-model, host-passthrough or a QEMU CPU model name such as Skylake-Server")}
	default:
		out.Mode, out.Match = "custom", "exact"
		out.Model = &libvirtxml.DomainCPUModel{Fallback: "forbid", Value: model}
	}
	return nil
}

// atLeastOne widens a topology count, treating an unset (0) count as 1.
func atLeastOne(n uint32) uint64 {
	if n == 0 {
		return 1
	}
	return uint64(n)
}

// memory returns the guest's memory: spec.domain.memory.guest, else resources.requests.memory,
// else resources.limits.memory (the API server's defaulting, repeated for VMIs stored before
// it), rounded up to whole mebibytes.
func memory(domain *v1.DomainSpec, domainPath *field.Path) (*libvirtxml.DomainMemory, field.ErrorList) {
	var q *resource.Quantity
	qPath := domainPath.Child("memory", "guest")
	switch {
	case domain.Memory != nil && domain.Memory.Guest != nil:
		q = domain.Memory.Guest
	case hasQuantity(domain.Resources.Requests, v1.ResourceMemory):
		v := domain.Resources.Requests[v1.ResourceMemory]
		q, qPath = &v, domainPath.Child("resources", "requests", "memory")
	case hasQuantity(domain.Resources.Limits, v1.ResourceMemory):
		v := domain.Resources.Limits[v1.ResourceMemory]
		q, qPath = &v, domainPath.Child("resources", "limits", "memory")
	default:
		return nil, field.ErrorList{field.Required(qPath,
			"the guest needs memory: set spec.domain.memory.guest or spec.domain.resources.requests.memory")}
	}
	bytes := q.Value()
	if bytes < mib {
		return nil, field.ErrorList{field.Invalid(qPath, q.String(), "the guest needs at least 1Mi of memory")}
	}
	mibs := (uint64(bytes) + mib - 1) / mib
	return &libvirtxml.DomainMemory{Value: uint(mibs * 1024), Unit: "KiB"}, nil
}

// hasQuantity reports whether list holds a non-zero quantity for name.
func hasQuantity(list v1.ResourceList, name v1.ResourceName) bool {
	q, ok := list[name]
	return ok && !q.IsZero()
}
