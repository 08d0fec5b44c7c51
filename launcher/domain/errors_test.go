package domain

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// tinyInputs are Inputs that build the tiny golden VMI.
func tinyInputs() Inputs {
	return Inputs{
		Emulation:     EmulationTCG,
		ConsoleSocket: "/run/vmi/console.sock",
		VNCSocket:     "/run/vmi/vnc.sock",
		AgentSocket:   "/run/vmi/agent.sock",
		Disks: map[string]DiskSource{
			"containerdisk": {Path: "/run/vmi/containerdisk.qcow2", Format: FormatQCOW2},
		},
	}
}

// refusal is a change to the tiny VMI or its Inputs that Build must refuse, and what the
// error must say.
type refusal struct {
	name   string
	change func(*v1.VirtualMachineInstance, *Inputs)
	want   []string
}

// refusals are what Vireo cannot run, each refused with the path of the field responsible.
var refusals = []refusal{
	{"host-passthrough under TCG", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.CPU.Model = cpuHostPassthrough
	}, []string{"spec.domain.cpu.model", "host-passthrough needs hardware virtualization"}},
	{"invalid CPU model", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.CPU.Model = "Skylake,+vmx"
	}, []string{"spec.domain.cpu.model", "QEMU CPU model name"}},
	{"too many vCPUs", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.CPU.Sockets, v.Spec.Domain.CPU.Cores = 64, 16
	}, []string{"spec.domain.cpu", "at most 512 vCPUs"}},
	{"dedicated CPUs", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.CPU.DedicatedCPUPlacement = true
	}, []string{"spec.domain.cpu.dedicatedCpuPlacement"}},
	{"serial BIOS without a serial console", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Firmware.Bootloader = &v1.Bootloader{BIOS: &v1.BIOS{UseSerial: ptr.To(true)}}
		v.Spec.Domain.Devices.AutoattachSerialConsole = ptr.To(false)
	}, []string{"spec.domain.firmware.bootloader.bios.useSerial"}},
	{"bad firmware serial", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Firmware.Serial = "a,b"
	}, []string{"spec.domain.firmware.serial"}},
	{"disk name that is no DNS label", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].Name = "Disk,x"
	}, []string{"spec.domain.devices.disks[0].name"}},
	{"invalid firmware UUID", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Firmware.UUID = "not-a-uuid"
	}, []string{"spec.domain.firmware.uuid"}},
	{"i440fx machine", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Machine.Type = "pc-i440fx-7.2"
	}, []string{"spec.domain.machine.type", "q35 machines only"}},
	{"machine type the node lacks", func(v *v1.VirtualMachineInstance, in *Inputs) {
		v.Spec.Domain.Machine.Type = "pc-q35-9.9"
		in.MachineTypes = MachineTypes{"q35": "pc-q35-7.2", "pc-q35-7.2": "pc-q35-7.2"}
	}, []string{"spec.domain.machine.type", "it offers pc-q35-7.2, q35"}},
	{"arm64", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Architecture = "arm64"
	}, []string{"spec.architecture", "amd64"}},
	{"no memory", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Memory = nil
		v.Spec.Domain.Resources = v1.ResourceRequirements{}
	}, []string{"spec.domain.memory.guest", "the guest needs memory"}},
	{"too little memory", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Memory.Guest = ptr.To(resource.MustParse("1k"))
	}, []string{"spec.domain.memory.guest", "at least 1Mi"}},
	{"Hyper-V", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Features.Hyperv = &v1.FeatureHyperv{}
	}, []string{"spec.domain.features.hyperv"}},
	{"APIC off", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Features.APIC = &v1.FeatureAPIC{FeatureState: v1.FeatureState{Enabled: ptr.To(false)}}
	}, []string{"spec.domain.features.apic.enabled"}},
	{"KVM clock under TCG", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Clock = &v1.Clock{Timer: &v1.Timer{KVM: &v1.KVMTimer{}}}
	}, []string{"spec.domain.clock.timer.kvm.present"}},
	{"disk without a volume", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Volumes = nil
	}, []string{"spec.domain.devices.disks[0].name", `no volume named "containerdisk"`}},
	{"volume the launcher did not prepare", func(_ *v1.VirtualMachineInstance, in *Inputs) {
		in.Disks = nil
	}, []string{"spec.volumes[0]", `no disk for volume "containerdisk"`}},
	{"host disk", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Volumes[0].VolumeSource = v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/srv/disk.img"}}
	}, []string{"spec.volumes[0].hostDisk"}},
	{"LUN", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].DiskDevice = v1.DiskDevice{LUN: &v1.LunTarget{}}
	}, []string{"spec.domain.devices.disks[0].lun"}},
	{"virtio CD-ROM", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusVirtio}}
	}, []string{"spec.domain.devices.disks[0].cdrom.bus"}},
	{"writable CD-ROM", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].DiskDevice = v1.DiskDevice{CDRom: &v1.CDRomTarget{ReadOnly: ptr.To(false)}}
	}, []string{"spec.domain.devices.disks[0].cdrom.readonly"}},
	{"read-only volume on a SATA disk", func(v *v1.VirtualMachineInstance, in *Inputs) {
		v.Spec.Domain.Devices.Disks[0].Disk.Bus = v1.DiskBusSATA
		in.Disks["containerdisk"] = DiskSource{Path: "/pvc/disk.img", Format: FormatRaw, ReadOnly: true}
	}, []string{"spec.domain.devices.disks[0].disk.bus", "SATA hard disks cannot be"}},
	{"cache none without direct I/O", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].Cache = v1.CacheNone
	}, []string{"spec.domain.devices.disks[0].cache", "direct I/O"}},
	{"bad disk serial", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].Serial = "a b"
	}, []string{"spec.domain.devices.disks[0].serial"}},
	{"boot order 0", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].BootOrder = ptr.To(uint32(0))
	}, []string{"spec.domain.devices.disks[0].bootOrder", "at least 1"}},
	{"boot order shared by a disk and an interface", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Disks[0].BootOrder = ptr.To(uint32(1))
		v.Spec.Domain.Devices.Interfaces[0].BootOrder = ptr.To(uint32(1))
	}, []string{"spec.domain.devices.interfaces[0].bootOrder", `already used by disk "containerdisk"`}},
	{"bridge binding", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}
	}, []string{"spec.domain.devices.interfaces[0].bridge", "masquerade"}},
	{"no binding", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{}
	}, []string{"spec.domain.devices.interfaces[0].masquerade"}},
	{"interface without a network", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Networks = nil
	}, []string{"spec.domain.devices.interfaces[0].name", `no network named "default"`}},
	{"interface name with a comma", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].Name = "x,hostfwd=tcp::1-:1"
	}, []string{"spec.domain.devices.interfaces[0].name"}},
	{"two interfaces", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces = append(v.Spec.Domain.Devices.Interfaces, v.Spec.Domain.Devices.Interfaces[0])
	}, []string{"spec.domain.devices.interfaces", "must have at most 1 item"}},
	{"igb NIC", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].Model = "igb"
	}, []string{"spec.domain.devices.interfaces[0].model", "no igb"}},
	{"bad MAC", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].MacAddress = "02:00:00"
	}, []string{"spec.domain.devices.interfaces[0].macAddress"}},
	{"SCTP port", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].Ports[0].Protocol = "SCTP"
	}, []string{"spec.domain.devices.interfaces[0].ports[0].protocol"}},
	{"port 0", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Devices.Interfaces[0].Ports[0].Port = 0
	}, []string{"spec.domain.devices.interfaces[0].ports[0].port"}},
	{"guest network too small", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Networks[0].Pod.VMNetworkCIDR = "10.0.2.0/30"
	}, []string{"spec.networks[0].pod.vmNetworkCIDR"}},
	{"IPv6 guest network", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Networks[0].Pod.VMNetworkCIDR = "fd10::/64"
	}, []string{"spec.networks[0].pod.vmNetworkCIDR"}},
	{"kernel the launcher did not extract", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Firmware.KernelBoot = &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "k:1", KernelPath: "/vmlinuz"}}
	}, []string{"spec.domain.firmware.kernelBoot.container.kernelPath", "not extracted"}},
	{"initrd without a kernel", func(v *v1.VirtualMachineInstance, _ *Inputs) {
		v.Spec.Domain.Firmware.KernelBoot = &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "k:1", InitrdPath: "/initrd"}}
	}, []string{"spec.domain.firmware.kernelBoot.container.kernelPath", "an initrd alone"}},
	{"no console socket", func(_ *v1.VirtualMachineInstance, in *Inputs) {
		in.ConsoleSocket = ""
	}, []string{"spec.domain.devices.autoattachSerialConsole", "Inputs.ConsoleSocket"}},
	{"relative VNC socket", func(_ *v1.VirtualMachineInstance, in *Inputs) {
		in.VNCSocket = "vnc.sock"
	}, []string{"spec.domain.devices.autoattachGraphicsDevice", "Inputs.VNCSocket"}},
	{"no agent socket", func(_ *v1.VirtualMachineInstance, in *Inputs) {
		in.AgentSocket = ""
	}, []string{"spec.domain.devices", "Inputs.AgentSocket"}},
}

// TestBuildRefuses checks that what Vireo cannot run is refused with the path of the field
// responsible and a hint, never dropped.
func TestBuildRefuses(t *testing.T) {
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			vmi := loadVMI(t, "tiny")
			in := tinyInputs()
			c.change(vmi, &in)
			d, err := Build(vmi, in)
			if err == nil {
				t.Fatalf("Build succeeded, want an error containing %q", c.want)
			}
			if d != nil {
				t.Errorf("Build returned a domain with its error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBuildRefusesBadInputs(t *testing.T) {
	if _, err := Build(nil, tinyInputs()); err == nil {
		t.Error("Build(nil) succeeded")
	}
	in := tinyInputs()
	in.Emulation = ""
	if _, err := Build(loadVMI(t, "tiny"), in); err == nil || !strings.Contains(err.Error(), "Inputs.Emulation") {
		t.Errorf("Build without an emulation mode: %v", err)
	}
	if _, err := Marshal(nil); err == nil {
		t.Error("Marshal(nil) succeeded")
	}
}

// TestBuildReportsEveryProblem checks that one Build reports all problems at once.
func TestBuildReportsEveryProblem(t *testing.T) {
	vmi := loadVMI(t, "tiny")
	vmi.Spec.Domain.CPU.Model = cpuHostPassthrough
	vmi.Spec.Domain.Devices.Interfaces[0].Model = "igb"
	_, err := Build(vmi, tinyInputs())
	for _, w := range []string{"spec.domain.cpu.model", "spec.domain.devices.interfaces[0].model"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not mention %s", err, w)
		}
	}
}

// TestBuildEmptyVMI checks that a VMI with nothing set, not even defaults, neither panics nor
// builds: it has no memory.
func TestBuildEmptyVMI(t *testing.T) {
	_, err := Build(&v1.VirtualMachineInstance{}, Inputs{Emulation: EmulationTCG})
	if err == nil || !strings.Contains(err.Error(), "spec.domain.memory.guest") {
		t.Errorf("Build of an empty VMI: %v", err)
	}
}
