package validation

import (
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestDedicatedCPUValidation(t *testing.T) {
	const (
		dedicated = "spec.domain.cpu.dedicatedCpuPlacement"
		isolate   = "spec.domain.cpu.isolateEmulatorThread"
	)
	// pinned sets dedicated CPUs with the given CPU request and limit, memory request and limit,
	// and topology; empty strings leave a resource out.
	pinned := func(cpuReq, cpuLim, memReq, memLim string, topo v1.CPU) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests, s.Domain.Resources.Limits = v1.ResourceList{}, v1.ResourceList{}
			for _, r := range []struct {
				list  v1.ResourceList
				name  v1.ResourceName
				value string
			}{
				{s.Domain.Resources.Requests, v1.ResourceCPU, cpuReq}, {s.Domain.Resources.Limits, v1.ResourceCPU, cpuLim},
				{s.Domain.Resources.Requests, v1.ResourceMemory, memReq}, {s.Domain.Resources.Limits, v1.ResourceMemory, memLim},
			} {
				if r.value != "" {
					r.list[r.name] = q(r.value)
				}
			}
			topo.DedicatedCPUPlacement = true
			s.Domain.CPU = &topo
		}
	}
	topo := func(sockets, cores, threads uint32) v1.CPU {
		return v1.CPU{Sockets: sockets, Cores: cores, Threads: threads}
	}
	runSpecCases(t, []specCase{
		{name: "request equals limit", mutate: pinned("2", "2", "1Gi", "1Gi", topo(2, 1, 1))},
		{name: "topology alone", mutate: pinned("", "", "1Gi", "", topo(1, 4, 1))},
		{name: "limit alone", mutate: pinned("", "4", "", "1Gi", topo(4, 1, 1))},
		{name: "isolated emulator thread", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			pinned("2", "2", "1Gi", "1Gi", topo(2, 1, 1))(s)
			s.Domain.CPU.IsolateEmulatorThread = true
		}},
		{name: "fractional request", mutate: pinned("1500m", "", "1Gi", "", topo(2, 1, 1)),
			want: []fe{{invalid, cpuReqPath}}},
		{name: "fractional limit", mutate: pinned("", "1500m", "1Gi", "", topo(2, 1, 1)),
			want: []fe{{invalid, cpuLimPath}}},
		{name: "request below limit", mutate: pinned("2", "4", "1Gi", "1Gi", topo(4, 1, 1)),
			want: []fe{{invalid, dedicated}}},
		{name: "request disagrees with topology", mutate: pinned("2", "", "1Gi", "", topo(1, 4, 1)),
			want: []fe{{invalid, dedicated}}},
		// KubeVirt counts memory.guest as the guest's memory given.
		{name: "memory.guest alone", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			pinned("2", "2", "", "", topo(2, 1, 1))(s)
			s.Domain.Memory = &v1.Memory{Guest: qp("1Gi")}
		}},
		{name: "no memory", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			pinned("2", "2", "", "", topo(2, 1, 1))(s)
			s.Domain.Memory = nil
		}, want: []fe{{required, memReqPath}}},
		{name: "memory request below limit", mutate: pinned("2", "2", "1Gi", "2Gi", topo(2, 1, 1)),
			want: []fe{{invalid, memReqPath}}},
		{name: "three threads", mutate: pinned("", "", "1Gi", "", topo(1, 1, 3)),
			want: []fe{{invalid, dedicated}}},
		{name: "isolated emulator thread without dedicated CPUs", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &v1.CPU{Sockets: 1, Cores: 1, Threads: 1, IsolateEmulatorThread: true}
		}, want: []fe{{invalid, isolate}}},
	})
}

func TestDedicatedCPUsNeedSomeCount(t *testing.T) {
	vmi := validVMI()
	vmi.Spec.Domain.Resources.Requests = v1.ResourceList{v1.ResourceMemory: q("1Gi")}
	vmi.Spec.Domain.CPU = &v1.CPU{DedicatedCPUPlacement: true}
	expectErrors(t, ValidateVirtualMachineInstance(vmi), fe{required, "spec.domain.cpu.dedicatedCpuPlacement"})
}
