package launcherpod

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// podResources computes the compute container's requests and limits:
//   - memory request = guest memory + overhead; memory limit (when the VMI has one) = limit + overhead;
//   - cpu request = the VMI's cpu request, else its cpu limit (what Kubernetes would default it
//     to), else vCPUs of the topology as whole CPUs, else DefaultCPURequest; cpu limit copied;
//   - any other requested or limited resource is copied verbatim.
func podResources(vmi *v1.VirtualMachineInstance, overhead resource.Quantity) (corev1.ResourceRequirements, field.ErrorList) {
	domain := &vmi.Spec.Domain
	resPath := field.NewPath("spec", "domain", "resources")
	errs := nonNegative(domain.Resources.Requests, resPath.Child("requests"))
	errs = append(errs, nonNegative(domain.Resources.Limits, resPath.Child("limits"))...)

	guest, guestPath, guestErrs := guestMemory(domain)
	errs = append(errs, guestErrs...)
	cpu, cpuErrs := cpuRequest(domain)
	errs = append(errs, cpuErrs...)
	if len(errs) > 0 {
		return corev1.ResourceRequirements{}, errs
	}

	out := corev1.ResourceRequirements{Requests: copyList(domain.Resources.Requests)}
	memRequest := guest.DeepCopy()
	memRequest.Add(overhead)
	out.Requests[corev1.ResourceMemory] = memRequest
	out.Requests[corev1.ResourceCPU] = cpu

	if len(domain.Resources.Limits) > 0 {
		out.Limits = copyList(domain.Resources.Limits)
	}
	if limit, ok := domain.Resources.Limits[v1.ResourceMemory]; ok {
		if limit.Cmp(guest) < 0 {
			errs = append(errs, field.Invalid(resPath.Child("limits", "memory"), limit.String(),
				"must be at least the guest memory "+guest.String()+" ("+guestPath.String()+")"))
		}
		limit = limit.DeepCopy() // Add may change a decimal amount shared with the VMI
		limit.Add(overhead)
		out.Limits[corev1.ResourceMemory] = limit
	}
	if limit, ok := domain.Resources.Limits[v1.ResourceCPU]; ok && limit.Cmp(cpu) < 0 {
		errs = append(errs, field.Invalid(resPath.Child("limits", "cpu"), limit.String(),
			"must be at least the CPU request "+cpu.String()))
	}
	return out, errs
}

// guestMemory is the memory the guest sees: spec.domain.memory.guest, else the memory request,
// else the memory limit (the API's own defaulting order). It returns the path it came from.
func guestMemory(domain *v1.DomainSpec) (resource.Quantity, *field.Path, field.ErrorList) {
	resPath := field.NewPath("spec", "domain", "resources")
	var guest resource.Quantity
	var path *field.Path
	if domain.Memory != nil && domain.Memory.Guest != nil {
		guest, path = domain.Memory.Guest.DeepCopy(), field.NewPath("spec", "domain", "memory", "guest")
	} else if q, ok := domain.Resources.Requests[v1.ResourceMemory]; ok {
		guest, path = q, resPath.Child("requests", "memory")
	} else if q, ok := domain.Resources.Limits[v1.ResourceMemory]; ok {
		guest, path = q, resPath.Child("limits", "memory")
	} else {
		return guest, nil, field.ErrorList{field.Required(field.NewPath("spec", "domain", "memory", "guest"),
			"set the guest memory or spec.domain.resources.requests.memory")}
	}
	if guest.Sign() <= 0 {
		return guest, path, field.ErrorList{field.Invalid(path, guest.String(), "guest memory must be more than 0")}
	}
	return guest, path, nil
}

// cpuRequest is the CPU the launcher Pod requests.
func cpuRequest(domain *v1.DomainSpec) (resource.Quantity, field.ErrorList) {
	if q, ok := domain.Resources.Requests[v1.ResourceCPU]; ok {
		return q, nil
	}
	if q, ok := domain.Resources.Limits[v1.ResourceCPU]; ok {
		return q, nil
	}
	cpu := domain.CPU
	if cpu == nil || (cpu.Cores == 0 && cpu.Sockets == 0 && cpu.Threads == 0) {
		return DefaultCPURequest.DeepCopy(), nil
	}
	// Unset parts of a topology count as 1, like the API's defaults. uint32 products fit in int64.
	vcpus := int64(max(cpu.Cores, 1)) * int64(max(cpu.Sockets, 1)) * int64(max(cpu.Threads, 1))
	return *resource.NewMilliQuantity(vcpus*DefaultCPURequest.MilliValue(), resource.DecimalSI), nil
}

// nonNegative reports every quantity of list below zero.
func nonNegative(list v1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(list)) {
		if q := list[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// copyList converts a VMI resource list to core/v1's (always non-nil).
func copyList(in v1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(in))
	for name, q := range in {
		out[corev1.ResourceName(name)] = q.DeepCopy()
	}
	return out
}
