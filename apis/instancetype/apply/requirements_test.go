package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

// TestRequirements: a preference's least vCPUs, memory and architecture are checked against the
// instancetype when there is one, else against the template in the preferred topology; the error
// names the fields that fall short with KubeVirt's message, and a VM that meets them passes.
func TestRequirements(t *testing.T) {
	topology := func(t v1beta1.PreferredCPUTopology) *v1beta1.CPUPreferences {
		return &v1beta1.CPUPreferences{PreferredCPUTopology: &t}
	}
	across := v1beta1.SpreadAcrossCoresThreads
	requires := func(cpus uint32, memory string, cpu *v1beta1.CPUPreferences) *v1beta1.VirtualMachinePreferenceSpec {
		return &v1beta1.VirtualMachinePreferenceSpec{CPU: cpu, Requirements: &v1beta1.PreferenceRequirements{
			CPU: &v1beta1.CPUPreferenceRequirement{Guest: cpus}, Memory: &v1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse(memory)}}}
	}
	withCPU := func(cpu *v1.CPU, memory string) *v1.VirtualMachineInstanceSpec {
		return &v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{CPU: cpu, Memory: &v1.Memory{Guest: new(resource.MustParse(memory))}}}
	}
	spread := topology(v1beta1.PreferSpread)
	spread.SpreadOptions = &v1beta1.SpreadOptions{Across: &across}
	arm := "arm64"
	for _, tc := range []struct {
		name         string
		instancetype *v1beta1.VirtualMachineInstancetypeSpec
		preference   *v1beta1.VirtualMachinePreferenceSpec
		spec         *v1.VirtualMachineInstanceSpec
		field, want  string
	}{
		{name: "instancetype meets", instancetype: small(), preference: requires(4, "2Gi", nil), spec: &v1.VirtualMachineInstanceSpec{}},
		{name: "instancetype short of CPUs", instancetype: small(), preference: requires(8, "1Gi", nil), spec: &v1.VirtualMachineInstanceSpec{},
			field: "spec.instancetype", want: RequirementsMessage + "insufficient CPU resources of 4 vCPU provided by instance type, preference requires 8 vCPU"},
		{name: "instancetype short of memory", instancetype: small(), preference: requires(1, "4Gi", nil), spec: &v1.VirtualMachineInstanceSpec{},
			field: "spec.instancetype", want: RequirementsMessage + "insufficient Memory resources of 2Gi provided by instance type, preference requires 4Gi"},
		{name: "no CPU in the template", preference: requires(2, "1Gi", nil), spec: &v1.VirtualMachineInstanceSpec{},
			field: "spec.template.spec.domain.cpu", want: RequirementsMessage + "no CPU resources provided by VirtualMachine, preference requires 2 vCPU"},
		{name: "sockets by default", preference: requires(2, "1Gi", nil), spec: withCPU(&v1.CPU{Cores: 4, Sockets: 1}, "1Gi"),
			field: "spec.template.spec.domain.cpu.sockets", want: RequirementsMessage + "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets"},
		{name: "cores preferred and given", preference: requires(2, "1Gi", topology(v1beta1.PreferCores)), spec: withCPU(&v1.CPU{Cores: 2}, "1Gi")},
		{name: "spread across cores and threads", preference: requires(4, "1Gi", spread), spec: withCPU(&v1.CPU{Sockets: 4, Cores: 1, Threads: 2}, "1Gi"),
			field: "spec.template.spec.domain.cpu.cores, spec.template.spec.domain.cpu.threads",
			want:  RequirementsMessage + "insufficient CPU resources of 2 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as CoresThreads"},
		{name: "any counts all", preference: requires(4, "1Gi", topology(v1beta1.PreferAny)), spec: withCPU(&v1.CPU{Sockets: 2, Cores: 2, Threads: 1}, "1Gi")},
		{name: "template memory short", preference: requires(1, "2Gi", topology(v1beta1.PreferAny)), spec: withCPU(&v1.CPU{Sockets: 1, Cores: 1, Threads: 1}, "1Gi"),
			field: "spec.template.spec.domain.memory", want: RequirementsMessage + "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi"},
		{name: "architecture", preference: &v1beta1.VirtualMachinePreferenceSpec{Requirements: &v1beta1.PreferenceRequirements{Architecture: &arm}},
			spec: &v1.VirtualMachineInstanceSpec{Architecture: "amd64"}, field: "spec.template.spec.architecture",
			want: RequirementsMessage + "preference requires architecture arm64 but amd64 is being requested"},
		{name: "no requirements", preference: &v1beta1.VirtualMachinePreferenceSpec{}, spec: &v1.VirtualMachineInstanceSpec{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Requirements(tc.instancetype, tc.preference, tc.spec)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want %q", tc.want)
			case tc.want != "" && (err.Field != tc.field || err.Detail != tc.want):
				t.Errorf("got %s: %s\nwant %s: %s", err.Field, err.Detail, tc.field, tc.want)
			}
		})
	}
}
