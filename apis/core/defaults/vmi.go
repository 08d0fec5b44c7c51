package defaults

import (
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// DefaultMachineType is the machine type a guest gets when it names none (KubeVirt's amd64 default).
const DefaultMachineType = "q35"

// DefaultDiskBus is the bus of a disk or CD-ROM that names none. SATA is KubeVirt's amd64 default
// because it boots without virtio drivers in the guest.
const DefaultDiskBus = v1.DiskBusSATA

// DefaultNetworkName is the name of the pod network and interface added to a VMI that has none.
const DefaultNetworkName = "default"

// DefaultArchitecture is the guest architecture a VMI gets when it names none: the cluster's
// (Vireo runs amd64 nodes).
const DefaultArchitecture = "amd64"

// SetVirtualMachineInstanceDefaults fills in the defaults of a VMI, as KubeVirt's VMI mutator and
// its generated defaulters do: architecture and machine type, CPU topology and request, guest
// memory, the pod network, disks for volumes and their buses, CD-ROM read-only and tray, the
// firmware UUID, the platform features and clock timers that are present but say nothing of
// being enabled, and image pull policies. Fields the user set are never changed. The
// termination grace period stays unset (30 s applies where it is used), and the lifecycle fields
// (finalizer, phase) are the strategy's business, not this function's.
func SetVirtualMachineInstanceDefaults(vmi *v1.VirtualMachineInstance) {
	spec := &vmi.Spec
	if spec.Architecture == "" {
		spec.Architecture = DefaultArchitecture
	}
	setMachineDefaults(&spec.Domain)
	setCPUTopologyDefaults(&spec.Domain)
	setCPURequestDefaults(&spec.Domain.Resources)
	setGuestMemoryDefaults(&spec.Domain)
	SetPodNetworkDefaults(spec)
	setDiskDefaults(spec)
	setFirmwareUUIDDefault(&spec.Domain)
	setFeatureDefaults(&spec.Domain)
	setClockDefaults(spec.Domain.Clock)
	setImagePullPolicyDefaults(spec)
	setProbeDefaults(spec.ReadinessProbe)
	setProbeDefaults(spec.LivenessProbe)
}

// setMachineDefaults sets domain.machine.type to q35 when it is empty.
func setMachineDefaults(domain *v1.DomainSpec) {
	if domain.Machine == nil {
		domain.Machine = &v1.Machine{}
	}
	if domain.Machine.Type == "" {
		domain.Machine.Type = DefaultMachineType
	}
}

// setCPUTopologyDefaults gives a guest that names no topology at all one socket per vCPU of the
// CPU limit (or else the request), rounded up, and one core and thread each. A partial topology is
// left as written (the converter treats a zero count as 1), as KubeVirt does. The CPU model is
// deliberately left empty: Vireo may run under software emulation (TCG), where host-model is not
// available, so the node agent picks the model.
func setCPUTopologyDefaults(domain *v1.DomainSpec) {
	if domain.CPU != nil && (domain.CPU.Sockets != 0 || domain.CPU.Cores != 0 || domain.CPU.Threads != 0) {
		return
	}
	if domain.CPU == nil {
		domain.CPU = &v1.CPU{}
	}
	domain.CPU.Sockets = vCPUsFromResources(&domain.Resources)
	domain.CPU.Cores, domain.CPU.Threads = 1, 1
}

// vCPUsFromResources returns the whole number of vCPUs the CPU limit (or else the CPU request)
// asks for, rounded up, and at least 1.
func vCPUsFromResources(res *v1.ResourceRequirements) uint32 {
	q, ok := res.Limits[v1.ResourceCPU]
	if !ok {
		q, ok = res.Requests[v1.ResourceCPU]
	}
	if !ok {
		return 1
	}
	milli := q.MilliValue()
	if milli <= 1000 {
		return 1
	}
	vcpus := (milli + 999) / 1000
	if vcpus > int64(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(vcpus)
}

// setCPURequestDefaults copies the CPU limit to the CPU request when only a limit is set, as a pod would.
func setCPURequestDefaults(res *v1.ResourceRequirements) {
	limit, hasLimit := res.Limits[v1.ResourceCPU]
	if !hasLimit {
		return
	}
	if _, hasRequest := res.Requests[v1.ResourceCPU]; hasRequest {
		return
	}
	if res.Requests == nil {
		res.Requests = v1.ResourceList{}
	}
	res.Requests[v1.ResourceCPU] = limit.DeepCopy()
}

// setGuestMemoryDefaults sets domain.memory.guest from the memory request, or else the memory limit.
func setGuestMemoryDefaults(domain *v1.DomainSpec) {
	if domain.Memory != nil && domain.Memory.Guest != nil {
		return
	}
	q, ok := domain.Resources.Requests[v1.ResourceMemory]
	if !ok {
		q, ok = domain.Resources.Limits[v1.ResourceMemory]
	}
	if !ok {
		return
	}
	if domain.Memory == nil {
		domain.Memory = &v1.Memory{}
	}
	guest := q.DeepCopy()
	domain.Memory.Guest = &guest
}

// setProbeDefaults gives a probe KubeVirt's (and Kubernetes') defaults: a 1 s timeout, a check
// every 10 s, healthy after 1 success, unhealthy after 3 failures.
func setProbeDefaults(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds < 1 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds < 1 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold < 1 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold < 1 {
		p.FailureThreshold = 3
	}
}
