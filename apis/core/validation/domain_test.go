package validation

import (
	"testing"

	"github.com/vireo-dev/vireo/apis/core"
)

const (
	resPath    = "spec.domain.resources"
	memReqPath = resPath + ".requests.memory"
	memLimPath = resPath + ".limits.memory"
	guestPath  = "spec.domain.memory.guest"
	cpuReqPath = resPath + ".requests.cpu"
	cpuLimPath = resPath + ".limits.cpu"
	fwPath     = "spec.domain.firmware"
	kbPath     = fwPath + ".kernelBoot"
)

func TestValidVMI(t *testing.T) {
	expectErrors(t, ValidateVirtualMachineInstance(validVMI()))
}

func TestVMIMetadata(t *testing.T) {
	vmi := validVMI()
	vmi.Name, vmi.Namespace = "Bad_Name", ""
	expectErrors(t, ValidateVirtualMachineInstance(vmi),
		fe{invalid, "metadata.name"}, fe{required, "metadata.namespace"})
}

func TestMemoryValidation(t *testing.T) {
	setMem := func(req, lim, guest string) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests = core.ResourceList{}
			s.Domain.Resources.Limits = core.ResourceList{}
			s.Domain.Memory = nil
			if req != "" {
				s.Domain.Resources.Requests[core.ResourceMemory] = q(req)
			}
			if lim != "" {
				s.Domain.Resources.Limits[core.ResourceMemory] = q(lim)
			}
			if guest != "" {
				s.Domain.Memory = &core.Memory{Guest: qp(guest)}
			}
		}
	}
	runSpecCases(t, []specCase{
		{name: "no memory requested", mutate: setMem("", "", ""), want: []fe{{required, memReqPath}}},
		{name: "empty memory struct", mutate: func(s *core.VirtualMachineInstanceSpec) {
			setMem("", "", "")(s)
			s.Domain.Memory = &core.Memory{}
		}, want: []fe{{required, memReqPath}}},
		{name: "only request", mutate: setMem("64Mi", "", "")},
		{name: "only limit", mutate: setMem("", "64Mi", "")},
		{name: "only guest", mutate: setMem("", "", "64Mi")},
		{name: "exactly 1M", mutate: setMem("1M", "", "")},
		{name: "request below 1M", mutate: setMem("999k", "", ""), want: []fe{{invalid, memReqPath}}},
		{name: "negative request", mutate: setMem("-1Gi", "", ""), want: []fe{{invalid, memReqPath}}},
		{name: "negative limit", mutate: setMem("", "-1Gi", ""), want: []fe{{invalid, memLimPath}}},
		{name: "guest below 1M", mutate: setMem("", "", "1k"), want: []fe{{invalid, guestPath}}},
		{name: "request above limit", mutate: setMem("2Gi", "1Gi", ""), want: []fe{{invalid, memReqPath}}},
		{name: "request equals limit", mutate: setMem("1Gi", "1Gi", "1Gi")},
		{name: "guest above limit", mutate: setMem("1Gi", "1Gi", "2Gi"), want: []fe{{invalid, guestPath}}},
		{name: "guest above request is overcommit", mutate: setMem("1Gi", "", "2Gi")},
	})
}

func TestCPUValidation(t *testing.T) {
	setCPU := func(req, lim string) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) {
			delete(s.Domain.Resources.Requests, core.ResourceCPU)
			s.Domain.Resources.Limits = core.ResourceList{}
			if req != "" {
				s.Domain.Resources.Requests[core.ResourceCPU] = q(req)
			}
			if lim != "" {
				s.Domain.Resources.Limits[core.ResourceCPU] = q(lim)
			}
		}
	}
	setTopology := func(sockets, cores, threads uint32) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &core.CPU{Sockets: sockets, Cores: cores, Threads: threads}
		}
	}
	runSpecCases(t, []specCase{
		{name: "request below limit", mutate: setCPU("500m", "2")},
		{name: "no cpu resources", mutate: setCPU("", "")},
		{name: "negative request", mutate: setCPU("-1", ""), want: []fe{{invalid, cpuReqPath}}},
		{name: "negative limit", mutate: setCPU("", "-1"), want: []fe{{invalid, cpuLimPath}}},
		{name: "request above limit", mutate: setCPU("3", "2"), want: []fe{{invalid, cpuReqPath}}},
		{name: "512 vCPUs", mutate: setTopology(8, 32, 2)},
		{name: "513 vCPUs", mutate: setTopology(513, 1, 1), want: []fe{{invalid, "spec.domain.cpu"}}},
		{name: "product too large", mutate: setTopology(16, 16, 4), want: []fe{{invalid, "spec.domain.cpu"}}},
		{name: "unset counts count as 1", mutate: setTopology(0, 512, 0)},
		{name: "no overflow", mutate: setTopology(1<<31, 1<<31, 4), want: []fe{{invalid, "spec.domain.cpu"}}},
	})
}

func TestMachineTypeValidation(t *testing.T) {
	setType := func(mt string) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) { s.Domain.Machine = &core.Machine{Type: mt} }
	}
	runSpecCases(t, []specCase{
		{name: "q35", mutate: setType("q35")},
		{name: "versioned pc-q35", mutate: setType("pc-q35-rhel9.4.0")},
		{name: "q35 alias", mutate: setType("q35-custom")},
		{name: "empty", mutate: setType("")},
		{name: "no machine", mutate: func(s *core.VirtualMachineInstanceSpec) { s.Domain.Machine = nil }},
		{name: "i440fx refused", mutate: setType("pc-i440fx-9.0"), want: []fe{{invalid, "spec.domain.machine.type"}}},
		{name: "arm virt refused", mutate: setType("virt"), want: []fe{{invalid, "spec.domain.machine.type"}}},
	})
}

func TestFirmwareValidation(t *testing.T) {
	setFW := func(fw *core.Firmware) func(s *core.VirtualMachineInstanceSpec) {
		return func(s *core.VirtualMachineInstanceSpec) { s.Domain.Firmware = fw }
	}
	container := func(c core.KernelBootContainer) *core.Firmware {
		return &core.Firmware{KernelBoot: &core.KernelBoot{KernelArgs: "console=ttyS0", Container: &c}}
	}
	runSpecCases(t, []specCase{
		{name: "bios", mutate: setFW(&core.Firmware{Bootloader: &core.Bootloader{BIOS: &core.BIOS{}}})},
		{name: "efi", mutate: setFW(&core.Firmware{Bootloader: &core.Bootloader{EFI: &core.EFI{SecureBoot: ptr(false)}}})},
		{name: "bios and efi", mutate: setFW(&core.Firmware{Bootloader: &core.Bootloader{BIOS: &core.BIOS{}, EFI: &core.EFI{}}}),
			want: []fe{{invalid, fwPath + ".bootloader"}}},
		{name: "bad uuid", mutate: setFW(&core.Firmware{UUID: "not-a-uuid"}), want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "kernel boot", mutate: setFW(container(core.KernelBootContainer{Image: "kernels:6.8", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}))},
		{name: "kernel boot without image", mutate: setFW(container(core.KernelBootContainer{KernelPath: "/boot/vmlinuz"})),
			want: []fe{{required, kbPath + ".container.image"}}},
		{name: "kernel boot without paths", mutate: setFW(container(core.KernelBootContainer{Image: "kernels:6.8"})),
			want: []fe{{required, kbPath + ".container"}}},
		{name: "relative kernel path", mutate: setFW(container(core.KernelBootContainer{Image: "k:1", KernelPath: "boot/vmlinuz", InitrdPath: "initrd"})),
			want: []fe{{invalid, kbPath + ".container.kernelPath"}, {invalid, kbPath + ".container.initrdPath"}}},
		{name: "kernel boot pull policy", mutate: setFW(container(core.KernelBootContainer{Image: "k:1", KernelPath: "/k", ImagePullPolicy: "Sometimes"})),
			want: []fe{{notSupported, kbPath + ".container.imagePullPolicy"}}},
		{name: "kernel args without container", mutate: setFW(&core.Firmware{KernelBoot: &core.KernelBoot{KernelArgs: "quiet"}}),
			want: []fe{{required, kbPath + ".container"}}},
	})
}

func TestTopLevelSpecValidation(t *testing.T) {
	runSpecCases(t, []specCase{
		{name: "grace 0", mutate: func(s *core.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr(int64(0)) }},
		{name: "negative grace", mutate: func(s *core.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr(int64(-1)) },
			want: []fe{{invalid, "spec.terminationGracePeriodSeconds"}}},
		{name: "eviction LiveMigrate", mutate: func(s *core.VirtualMachineInstanceSpec) {
			s.EvictionStrategy = ptr(core.EvictionStrategyLiveMigrate)
		}},
		{name: "eviction External", mutate: func(s *core.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr(core.EvictionStrategyExternal) }},
		{name: "unknown eviction", mutate: func(s *core.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr(core.EvictionStrategy("Migrate")) },
			want: []fe{{notSupported, "spec.evictionStrategy"}}},
		{name: "empty eviction", mutate: func(s *core.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr(core.EvictionStrategy("")) },
			want: []fe{{notSupported, "spec.evictionStrategy"}}},
		{name: "start paused", mutate: func(s *core.VirtualMachineInstanceSpec) { s.StartStrategy = ptr(core.StartStrategyPaused) }},
		{name: "unknown start strategy", mutate: func(s *core.VirtualMachineInstanceSpec) { s.StartStrategy = ptr(core.StartStrategy("Running")) },
			want: []fe{{notSupported, "spec.startStrategy"}}},
		{name: "hostname and subdomain", mutate: func(s *core.VirtualMachineInstanceSpec) { s.Hostname, s.Subdomain = "vm-1", "web.svc" }},
		{name: "hostname with dots", mutate: func(s *core.VirtualMachineInstanceSpec) { s.Hostname = "vm.example" },
			want: []fe{{invalid, "spec.hostname"}}},
		{name: "bad subdomain", mutate: func(s *core.VirtualMachineInstanceSpec) { s.Subdomain = "Web_Svc" },
			want: []fe{{invalid, "spec.subdomain"}}},
	})
}
