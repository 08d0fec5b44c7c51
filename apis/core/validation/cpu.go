package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// MaxVCPUs is the largest number of vCPUs (sockets × cores × threads) a guest may have.
const MaxVCPUs = 512

// maxDedicatedThreads is the most threads per core a guest with dedicated CPUs may have (KubeVirt's limit).
const maxDedicatedThreads = 2

// validateCPU checks the CPU request and limit, the vCPU topology and CPU pinning.
func validateCPU(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	resPath := fldPath.Child("resources")
	request, hasRequest := domain.Resources.Requests[v1.ResourceCPU]
	limit, hasLimit := domain.Resources.Limits[v1.ResourceCPU]
	if hasRequest {
		errs = append(errs, validateNonNegativeQuantity(request, resPath.Child("requests", "cpu"))...)
	}
	if hasLimit {
		errs = append(errs, validateNonNegativeQuantity(limit, resPath.Child("limits", "cpu"))...)
	}
	// A limit of 0 means "no limit", as in KubeVirt.
	if hasRequest && hasLimit && limit.Sign() > 0 && request.Cmp(limit) > 0 {
		errs = append(errs, field.Invalid(resPath.Child("requests", "cpu"), request.String(),
			fmt.Sprintf("must be less than or equal to the CPU limit %s", limit.String())))
	}
	cpu := domain.CPU
	if cpu == nil {
		return errs
	}
	// Each count is capped first, so that the product cannot overflow.
	s, c, t := atLeastOne(cpu.Sockets), atLeastOne(cpu.Cores), atLeastOne(cpu.Threads)
	if s > MaxVCPUs || c > MaxVCPUs || t > MaxVCPUs || s*c*t > MaxVCPUs {
		topology := fmt.Sprintf("sockets=%d, cores=%d, threads=%d", s, c, t)
		errs = append(errs, field.Invalid(fldPath.Child("cpu"), topology, fmt.Sprintf(
			"sockets × cores × threads may be at most %d vCPUs", MaxVCPUs)))
	}
	if cpu.IsolateEmulatorThread && !cpu.DedicatedCPUPlacement {
		errs = append(errs, field.Invalid(fldPath.Child("cpu", "isolateEmulatorThread"), true,
			"isolateEmulatorThread is only allowed together with dedicatedCpuPlacement: true"))
	}
	if cpu.DedicatedCPUPlacement {
		errs = append(errs, validateDedicatedCPUs(domain, fldPath)...)
	}
	return errs
}

// atLeastOne widens a topology count, treating an unset (0) count as 1.
func atLeastOne(n uint32) int64 {
	if n == 0 {
		return 1
	}
	return int64(n)
}

// topologyVCPUs is the number of vCPUs the topology asks for, ignoring unset counts, or 0 when
// none is set (KubeVirt's count).
func topologyVCPUs(cpu *v1.CPU) int64 {
	var n int64
	for _, c := range []uint32{cpu.Cores, cpu.Sockets, cpu.Threads} {
		switch {
		case c == 0:
		case n == 0:
			n = int64(c)
		default:
			n *= int64(c)
		}
	}
	return n
}

// wholeCPUs returns the whole number of CPUs of q (rounded up) and whether q is a whole number.
func wholeCPUs(q resource.Quantity) (int64, bool) {
	return q.Value(), q.Value()*1000 == q.MilliValue()
}

// validateDedicatedCPUs checks what pinning vCPUs to dedicated physical CPUs needs, with
// KubeVirt's rules: memory request and limit equal when both are given (that some memory is
// given, memory.guest counting, is every VMI's rule); whole-number CPU
// requests and limits, equal when both are given; some CPU count from the resources or the
// topology, and a topology that agrees with the resources; at most two threads per core.
func validateDedicatedCPUs(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	resPath, dedicatedPath := fldPath.Child("resources"), fldPath.Child("cpu", "dedicatedCpuPlacement")
	res := domain.Resources
	memReq, memLim := res.Requests.Memory().Value(), res.Limits.Memory().Value()
	if memReq > 0 && memLim > 0 && memReq != memLim {
		errs = append(errs, field.Invalid(resPath.Child("requests", "memory"), res.Requests.Memory().String(),
			"with dedicatedCpuPlacement the memory request must equal the memory limit "+res.Limits.Memory().String()))
	}
	req, reqWhole := wholeCPUs(*res.Requests.Cpu())
	lim, limWhole := wholeCPUs(*res.Limits.Cpu())
	if req > 0 && !reqWhole {
		errs = append(errs, field.Invalid(resPath.Child("requests", "cpu"), res.Requests.Cpu().String(),
			"with dedicatedCpuPlacement the CPU request must be a whole number of CPUs, such as 2"))
	}
	if lim > 0 && !limWhole {
		errs = append(errs, field.Invalid(resPath.Child("limits", "cpu"), res.Limits.Cpu().String(),
			"with dedicatedCpuPlacement the CPU limit must be a whole number of CPUs, such as 2"))
	}
	vcpus := topologyVCPUs(domain.CPU)
	switch {
	case req == 0 && lim == 0 && vcpus == 0:
		errs = append(errs, field.Required(dedicatedPath,
			"dedicatedCpuPlacement needs a CPU count: set resources.requests.cpu, resources.limits.cpu or cpu.cores"))
	case req > 0 && lim > 0 && req != lim:
		errs = append(errs, field.Invalid(dedicatedPath, true, fmt.Sprintf(
			"with dedicatedCpuPlacement the CPU request (%s) must equal the CPU limit (%s)", res.Requests.Cpu(), res.Limits.Cpu())))
	case (req > 0 || lim > 0) && vcpus > 0 && req != vcpus && lim != vcpus:
		errs = append(errs, field.Invalid(dedicatedPath, true, fmt.Sprintf(
			"the CPU request or limit must equal the %d vCPUs of the cpu topology; set only one of them", vcpus)))
	}
	if domain.CPU.Threads > maxDedicatedThreads {
		errs = append(errs, field.Invalid(dedicatedPath, true, fmt.Sprintf(
			"with dedicatedCpuPlacement a core may have at most %d threads, not %d", maxDedicatedThreads, domain.CPU.Threads)))
	}
	return errs
}
