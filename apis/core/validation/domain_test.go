package validation

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
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
	setMem := func(req, lim, guest string) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Resources.Requests = v1.ResourceList{}
			s.Domain.Resources.Limits = v1.ResourceList{}
			s.Domain.Memory = nil
			if req != "" {
				s.Domain.Resources.Requests[v1.ResourceMemory] = q(req)
			}
			if lim != "" {
				s.Domain.Resources.Limits[v1.ResourceMemory] = q(lim)
			}
			if guest != "" {
				s.Domain.Memory = &v1.Memory{Guest: qp(guest)}
			}
		}
	}
	runSpecCases(t, []specCase{
		{name: "no memory requested", mutate: setMem("", "", ""), want: []fe{{required, memReqPath}}},
		{name: "empty memory struct", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			setMem("", "", "")(s)
			s.Domain.Memory = &v1.Memory{}
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
		{name: "request 0 with guest", mutate: setMem("0", "", "64Mi")},
		{name: "request 0 alone", mutate: setMem("0", "", ""), want: []fe{{required, memReqPath}}},
		{name: "limit 0 means no limit", mutate: setMem("1Gi", "0", "1Gi")},
		{name: "guest 0", mutate: setMem("1Gi", "", "0"), want: []fe{{invalid, guestPath}}},
		{name: "negative guest", mutate: setMem("", "", "-1Gi"), want: []fe{{invalid, guestPath}}},
	})
}

func TestCPUValidation(t *testing.T) {
	setCPU := func(req, lim string) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			delete(s.Domain.Resources.Requests, v1.ResourceCPU)
			s.Domain.Resources.Limits = v1.ResourceList{}
			if req != "" {
				s.Domain.Resources.Requests[v1.ResourceCPU] = q(req)
			}
			if lim != "" {
				s.Domain.Resources.Limits[v1.ResourceCPU] = q(lim)
			}
		}
	}
	setTopology := func(sockets, cores, threads uint32) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &v1.CPU{Sockets: sockets, Cores: cores, Threads: threads}
		}
	}
	runSpecCases(t, []specCase{
		{name: "request below limit", mutate: setCPU("500m", "2")},
		{name: "no cpu resources", mutate: setCPU("", "")},
		{name: "negative request", mutate: setCPU("-1", ""), want: []fe{{invalid, cpuReqPath}}},
		{name: "negative limit", mutate: setCPU("", "-1"), want: []fe{{invalid, cpuLimPath}}},
		{name: "request above limit", mutate: setCPU("3", "2"), want: []fe{{invalid, cpuReqPath}}},
		{name: "limit 0 means no limit", mutate: setCPU("3", "0")},
		{name: "512 vCPUs", mutate: setTopology(8, 32, 2)},
		{name: "513 vCPUs", mutate: setTopology(513, 1, 1), want: []fe{{invalid, "spec.domain.cpu"}}},
		{name: "product too large", mutate: setTopology(16, 16, 4), want: []fe{{invalid, "spec.domain.cpu"}}},
		{name: "unset counts count as 1", mutate: setTopology(0, 512, 0)},
		{name: "no overflow", mutate: setTopology(1<<31, 1<<31, 4), want: []fe{{invalid, "spec.domain.cpu"}}},
	})
}

func TestMachineTypeValidation(t *testing.T) {
	setType := func(mt string) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Machine = &v1.Machine{Type: mt} }
	}
	runSpecCases(t, []specCase{
		{name: "q35", mutate: setType("q35")},
		{name: "versioned pc-q35", mutate: setType("pc-q35-rhel9.4.0")},
		{name: "q35 alias", mutate: setType("q35-custom")},
		{name: "empty", mutate: setType("")},
		{name: "no machine", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Machine = nil }},
		{name: "i440fx refused", mutate: setType("pc-i440fx-9.0"), want: []fe{{invalid, "spec.domain.machine.type"}}},
		{name: "arm virt refused", mutate: setType("virt"), want: []fe{{invalid, "spec.domain.machine.type"}}},
	})
}

func TestFirmwareValidation(t *testing.T) {
	setFW := func(fw *v1.Firmware) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Firmware = fw }
	}
	container := func(c v1.KernelBootContainer) *v1.Firmware {
		return &v1.Firmware{KernelBoot: &v1.KernelBoot{KernelArgs: "console=ttyS0", Container: &c}}
	}
	runSpecCases(t, []specCase{
		{name: "bios", mutate: setFW(&v1.Firmware{Bootloader: &v1.Bootloader{BIOS: &v1.BIOS{}}})},
		{name: "efi", mutate: setFW(&v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{SecureBoot: ptr.To(false)}}})},
		{name: "bios and efi", mutate: setFW(&v1.Firmware{Bootloader: &v1.Bootloader{BIOS: &v1.BIOS{}, EFI: &v1.EFI{SecureBoot: ptr.To(false)}}}),
			want: []fe{{invalid, fwPath + ".bootloader"}}},
		{name: "bad uuid", mutate: setFW(&v1.Firmware{UUID: "not-a-uuid"}), want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "uppercase uuid", mutate: setFW(&v1.Firmware{UUID: "6A1A24A1-4061-4607-8BF4-A3963D0C5895"})},
		{name: "undashed uuid", mutate: setFW(&v1.Firmware{UUID: "6a1a24a1406146078bf4a3963d0c5895"})},
		{name: "regrouped uuid", mutate: setFW(&v1.Firmware{UUID: "6a1a24a14061-4607-8bf4a3963d0c-5895"})},
		{name: "uuid with spaces", mutate: setFW(&v1.Firmware{UUID: " 6a 1a 24 a1 40 61 46 07 8b f4 a3 96 3d 0c 58 95 "})},
		{name: "uuid with a digit short", mutate: setFW(&v1.Firmware{UUID: "6a1a24a1-4061-4607-8bf4-a3963d0c589"}),
			want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "uuid with a digit extra", mutate: setFW(&v1.Firmware{UUID: "6a1a24a1-4061-4607-8bf4-a3963d0c58950"}),
			want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "uuid split inside a byte", mutate: setFW(&v1.Firmware{UUID: "6a1a24a-14061-4607-8bf4-a3963d0c5895"}),
			want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "uuid in braces", mutate: setFW(&v1.Firmware{UUID: "{6a1a24a1-4061-4607-8bf4-a3963d0c5895}"}),
			want: []fe{{invalid, fwPath + ".uuid"}}},
		{name: "serial", mutate: setFW(&v1.Firmware{Serial: "SN-2024_01.a+b"})},
		{name: "serial with a space", mutate: setFW(&v1.Firmware{Serial: "SN 1"}), want: []fe{{invalid, fwPath + ".serial"}}},
		{name: "serial too long", mutate: setFW(&v1.Firmware{Serial: strings.Repeat("a", 257)}), want: []fe{{tooLong, fwPath + ".serial"}}},
		{name: "kernel boot", mutate: setFW(container(v1.KernelBootContainer{Image: "kernels:6.8", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}))},
		{name: "kernel boot without image", mutate: setFW(container(v1.KernelBootContainer{KernelPath: "/boot/vmlinuz"})),
			want: []fe{{required, kbPath + ".container.image"}}},
		{name: "kernel boot without paths", mutate: setFW(container(v1.KernelBootContainer{Image: "kernels:6.8"})),
			want: []fe{{required, kbPath + ".container"}}},
		{name: "relative kernel path", mutate: setFW(container(v1.KernelBootContainer{Image: "k:1", KernelPath: "boot/vmlinuz", InitrdPath: "initrd"})),
			want: []fe{{invalid, kbPath + ".container.kernelPath"}, {invalid, kbPath + ".container.initrdPath"}}},
		{name: "kernel path with ..", mutate: setFW(container(v1.KernelBootContainer{Image: "k:1", KernelPath: "/boot/../vmlinuz"})),
			want: []fe{{invalid, kbPath + ".container.kernelPath"}}},
		{name: "kernel path is the root", mutate: setFW(container(v1.KernelBootContainer{Image: "k:1", KernelPath: "/"})),
			want: []fe{{invalid, kbPath + ".container.kernelPath"}}},
		{name: "kernel boot pull secret", mutate: setFW(container(v1.KernelBootContainer{Image: "k:1", KernelPath: "/k", ImagePullSecret: "Not_A_Name"})),
			want: []fe{{invalid, kbPath + ".container.imagePullSecret"}}},
		{name: "kernel boot pull policy", mutate: setFW(container(v1.KernelBootContainer{Image: "k:1", KernelPath: "/k", ImagePullPolicy: "Sometimes"})),
			want: []fe{{notSupported, kbPath + ".container.imagePullPolicy"}}},
		{name: "kernel args without container", mutate: setFW(&v1.Firmware{KernelBoot: &v1.KernelBoot{KernelArgs: "quiet"}}),
			want: []fe{{invalid, kbPath + ".kernelArgs"}}},
	})
}

func TestTopLevelSpecValidation(t *testing.T) {
	runSpecCases(t, []specCase{
		{name: "grace 0", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr.To(int64(0)) }},
		{name: "negative grace", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr.To(int64(-1)) },
			want: []fe{{invalid, "spec.terminationGracePeriodSeconds"}}},
		{name: "eviction LiveMigrate", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.EvictionStrategy = ptr.To(v1.EvictionStrategyLiveMigrate)
		}},
		{name: "eviction External", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategyExternal) }},
		{name: "unknown eviction", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategy("Migrate")) },
			want: []fe{{notSupported, "spec.evictionStrategy"}}},
		{name: "empty eviction", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategy("")) },
			want: []fe{{notSupported, "spec.evictionStrategy"}}},
		{name: "start paused", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.StartStrategy = ptr.To(v1.StartStrategyPaused) }},
		{name: "unknown start strategy", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.StartStrategy = ptr.To(v1.StartStrategy("Running")) },
			want: []fe{{notSupported, "spec.startStrategy"}}},
		{name: "hostname and subdomain", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Hostname, s.Subdomain = "vm-1", "web.svc" }},
		{name: "hostname with dots", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Hostname = "vm.example" },
			want: []fe{{invalid, "spec.hostname"}}},
		{name: "bad subdomain", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Subdomain = "Web_Svc" },
			want: []fe{{invalid, "spec.subdomain"}}},
	})
}
