package defaults

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/vireo-dev/vireo/apis/core"
)

// podNetwork and masqueradeIface are the network and interface the defaults add.
var (
	podNetwork      = core.Network{Name: "default", NetworkSource: core.NetworkSource{Pod: &core.PodNetwork{}}}
	masqueradeIface = core.Interface{Name: "default", InterfaceBindingMethod: core.InterfaceBindingMethod{Masquerade: &core.InterfaceMasquerade{}}}
)

func TestPodNetworkDefaults(t *testing.T) {
	otherNet := core.Network{Name: "net1", NetworkSource: core.NetworkSource{Pod: &core.PodNetwork{}}}
	otherIface := core.Interface{Name: "net1", InterfaceBindingMethod: core.InterfaceBindingMethod{Masquerade: &core.InterfaceMasquerade{}}}
	cases := []struct {
		name       string
		autoattach *bool
		networks   []core.Network
		ifaces     []core.Interface
		wantNets   []core.Network
		wantIfaces []core.Interface
	}{
		{name: "none: pod network with masquerade", wantNets: []core.Network{podNetwork}, wantIfaces: []core.Interface{masqueradeIface}},
		{name: "autoattach true", autoattach: ptr(true), wantNets: []core.Network{podNetwork}, wantIfaces: []core.Interface{masqueradeIface}},
		{name: "autoattach false", autoattach: ptr(false)},
		{name: "networks given", networks: []core.Network{otherNet}, wantNets: []core.Network{otherNet}},
		{name: "interfaces given", ifaces: []core.Interface{otherIface}, wantIfaces: []core.Interface{otherIface}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(core.VirtualMachineInstanceSpec{Networks: tc.networks})
			vmi.Spec.Domain.Devices.AutoattachPodInterface = tc.autoattach
			vmi.Spec.Domain.Devices.Interfaces = tc.ifaces
			SetVirtualMachineInstanceDefaults(vmi)
			if !apiequality.Semantic.DeepEqual(vmi.Spec.Networks, tc.wantNets) {
				t.Errorf("networks = %+v, want %+v", vmi.Spec.Networks, tc.wantNets)
			}
			if !apiequality.Semantic.DeepEqual(vmi.Spec.Domain.Devices.Interfaces, tc.wantIfaces) {
				t.Errorf("interfaces = %+v, want %+v", vmi.Spec.Domain.Devices.Interfaces, tc.wantIfaces)
			}
		})
	}
}

// volume returns a container disk volume named name.
func volume(name string) core.Volume {
	return core.Volume{Name: name, VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{Image: "img:1"}}}
}

// sataDisk returns the disk the defaults produce for a volume named name.
func sataDisk(name string) core.Disk {
	return core.Disk{Name: name, DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{Bus: core.DiskBusSATA}}}
}

func TestDiskDefaults(t *testing.T) {
	cases := []struct {
		name    string
		volumes []core.Volume
		disks   []core.Disk
		want    []core.Disk
	}{
		{name: "disk added for volume", volumes: []core.Volume{volume("a")}, want: []core.Disk{sataDisk("a")}},
		{
			name:    "only missing disks added, after the user's",
			volumes: []core.Volume{volume("a"), volume("b")},
			disks:   []core.Disk{{Name: "b", DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{Bus: core.DiskBusVirtio}}}},
			want:    []core.Disk{{Name: "b", DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{Bus: core.DiskBusVirtio}}}, sataDisk("a")},
		},
		{name: "disk without device becomes a sata disk", disks: []core.Disk{{Name: "a"}}, want: []core.Disk{sataDisk("a")}},
		{name: "empty disk target gets sata", disks: []core.Disk{{Name: "a", DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{}}}}, want: []core.Disk{sataDisk("a")}},
		{
			name:  "cdrom gets sata and readonly",
			disks: []core.Disk{{Name: "a", DiskDevice: core.DiskDevice{CDRom: &core.CDRomTarget{}}}},
			want:  []core.Disk{{Name: "a", DiskDevice: core.DiskDevice{CDRom: &core.CDRomTarget{Bus: core.DiskBusSATA, ReadOnly: ptr(true)}}}},
		},
		{
			name:  "cdrom settings kept",
			disks: []core.Disk{{Name: "a", DiskDevice: core.DiskDevice{CDRom: &core.CDRomTarget{Bus: core.DiskBusSCSI, ReadOnly: ptr(false)}}}},
			want:  []core.Disk{{Name: "a", DiskDevice: core.DiskDevice{CDRom: &core.CDRomTarget{Bus: core.DiskBusSCSI, ReadOnly: ptr(false)}}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(core.VirtualMachineInstanceSpec{Volumes: tc.volumes})
			vmi.Spec.Domain.Devices.Disks = tc.disks
			SetVirtualMachineInstanceDefaults(vmi)
			if !apiequality.Semantic.DeepEqual(vmi.Spec.Domain.Devices.Disks, tc.want) {
				t.Errorf("disks = %+v, want %+v", vmi.Spec.Domain.Devices.Disks, tc.want)
			}
		})
	}
}

func TestTerminationGracePeriodDefault(t *testing.T) {
	vmi := newVMI(core.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if g := vmi.Spec.TerminationGracePeriodSeconds; g == nil || *g != 30 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 30", g)
	}
	vmi = newVMI(core.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr(int64(0))})
	SetVirtualMachineInstanceDefaults(vmi)
	if g := vmi.Spec.TerminationGracePeriodSeconds; *g != 0 {
		t.Errorf("terminationGracePeriodSeconds = %d, want the user's 0", *g)
	}
}

func TestFirmwareUUIDDefault(t *testing.T) {
	// Expected values computed independently (Python's uuid.uuid5) under FirmwareUUIDNamespace.
	for name, want := range map[string]string{
		"testvmi": "1cdc5eb9-6297-506a-8b81-1115691a0322",
		"my-vm":   "da436a89-9320-5d13-9d80-a1c2ef62f952",
	} {
		if got := FirmwareUUID(name); string(got) != want {
			t.Errorf("FirmwareUUID(%q) = %s, want %s", name, got, want)
		}
	}
	vmi := newVMI(core.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if got := vmi.Spec.Domain.Firmware.UUID; got != "1cdc5eb9-6297-506a-8b81-1115691a0322" {
		t.Errorf("firmware uuid = %s, want the name-based UUID of testvmi", got)
	}
	vmi = newVMI(core.VirtualMachineInstanceSpec{Domain: core.DomainSpec{Firmware: &core.Firmware{UUID: "user-uuid", Serial: "s1"}}})
	SetVirtualMachineInstanceDefaults(vmi)
	if fw := vmi.Spec.Domain.Firmware; fw.UUID != "user-uuid" || fw.Serial != "s1" {
		t.Errorf("firmware = %+v, want the user's uuid and serial kept", fw)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	cases := map[string]core.PullPolicy{
		"fedora":                            core.PullAlways,
		"fedora:latest":                     core.PullAlways,
		"quay.io/containerdisks/fedora":     core.PullAlways,
		"registry:5000/fedora":              core.PullAlways,
		"registry:5000/fedora:latest":       core.PullAlways,
		"fedora:41":                         core.PullIfNotPresent,
		"registry:5000/fedora:41":           core.PullIfNotPresent,
		"fedora@sha256:0123456789abcdef":    core.PullIfNotPresent,
		"fedora:latest@sha256:0123456789ab": core.PullIfNotPresent,
	}
	for image, want := range cases {
		if got := DefaultPullPolicy(image); got != want {
			t.Errorf("DefaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

func TestImagePullPolicyDefaults(t *testing.T) {
	spec := core.VirtualMachineInstanceSpec{Volumes: []core.Volume{
		{Name: "a", VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{Image: "fedora:latest"}}},
		{Name: "b", VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{Image: "fedora:41"}}},
		{Name: "c", VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{Image: "fedora", ImagePullPolicy: core.PullNever}}},
	}}
	spec.Domain.Firmware = &core.Firmware{KernelBoot: &core.KernelBoot{Container: &core.KernelBootContainer{Image: "kernel:6.8"}}}
	vmi := newVMI(spec)
	SetVirtualMachineInstanceDefaults(vmi)
	for i, want := range []core.PullPolicy{core.PullAlways, core.PullIfNotPresent, core.PullNever} {
		if got := vmi.Spec.Volumes[i].ContainerDisk.ImagePullPolicy; got != want {
			t.Errorf("volumes[%d] pull policy = %s, want %s", i, got, want)
		}
	}
	if got := vmi.Spec.Domain.Firmware.KernelBoot.Container.ImagePullPolicy; got != core.PullIfNotPresent {
		t.Errorf("kernel boot pull policy = %s, want IfNotPresent", got)
	}
}

func TestVMIDefaultsAreIdempotent(t *testing.T) {
	vmi := newVMI(withResources("", "2", "1Gi", ""))
	vmi.Spec.Volumes = []core.Volume{volume("a")}
	SetVirtualMachineInstanceDefaults(vmi)
	once := vmi.DeepCopy()
	SetVirtualMachineInstanceDefaults(vmi)
	if !apiequality.Semantic.DeepEqual(once, vmi) {
		t.Errorf("defaulting twice changed the VMI:\nonce:  %+v\ntwice: %+v", once.Spec, vmi.Spec)
	}
}
