package defaults

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// podNetwork and masqueradeIface are the network and interface the defaults add.
var (
	podNetwork      = v1.Network{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}
	masqueradeIface = v1.Interface{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}
)

func TestPodNetworkDefaults(t *testing.T) {
	otherNet := v1.Network{Name: "net1", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}
	otherIface := v1.Interface{Name: "net1", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}
	cases := []struct {
		name       string
		autoattach *bool
		networks   []v1.Network
		ifaces     []v1.Interface
		wantNets   []v1.Network
		wantIfaces []v1.Interface
	}{
		{name: "none: pod network with masquerade", wantNets: []v1.Network{podNetwork}, wantIfaces: []v1.Interface{masqueradeIface}},
		{name: "autoattach true", autoattach: ptr(true), wantNets: []v1.Network{podNetwork}, wantIfaces: []v1.Interface{masqueradeIface}},
		{name: "autoattach false", autoattach: ptr(false)},
		{name: "networks given", networks: []v1.Network{otherNet}, wantNets: []v1.Network{otherNet}},
		{name: "interfaces given", ifaces: []v1.Interface{otherIface}, wantIfaces: []v1.Interface{otherIface}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(v1.VirtualMachineInstanceSpec{Networks: tc.networks})
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
func volume(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "img:1"}}}
}

// sataDisk returns the disk the defaults produce for a volume named name.
func sataDisk(name string) v1.Disk {
	return v1.Disk{Name: name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSATA}}}
}

func TestDiskDefaults(t *testing.T) {
	cases := []struct {
		name    string
		volumes []v1.Volume
		disks   []v1.Disk
		want    []v1.Disk
	}{
		{name: "disk added for volume", volumes: []v1.Volume{volume("a")}, want: []v1.Disk{sataDisk("a")}},
		{
			name:    "only missing disks added, after the user's",
			volumes: []v1.Volume{volume("a"), volume("b")},
			disks:   []v1.Disk{{Name: "b", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}},
			want:    []v1.Disk{{Name: "b", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}}, sataDisk("a")},
		},
		{name: "disk without device becomes a sata disk", disks: []v1.Disk{{Name: "a"}}, want: []v1.Disk{sataDisk("a")}},
		{name: "empty disk target gets sata", disks: []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{}}}}, want: []v1.Disk{sataDisk("a")}},
		{
			name:  "cdrom gets sata and readonly",
			disks: []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{}}}},
			want:  []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA, ReadOnly: ptr(true)}}}},
		},
		{
			name:  "cdrom settings kept",
			disks: []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI, ReadOnly: ptr(false)}}}},
			want:  []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI, ReadOnly: ptr(false)}}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(v1.VirtualMachineInstanceSpec{Volumes: tc.volumes})
			vmi.Spec.Domain.Devices.Disks = tc.disks
			SetVirtualMachineInstanceDefaults(vmi)
			if !apiequality.Semantic.DeepEqual(vmi.Spec.Domain.Devices.Disks, tc.want) {
				t.Errorf("disks = %+v, want %+v", vmi.Spec.Domain.Devices.Disks, tc.want)
			}
		})
	}
}

func TestTerminationGracePeriodDefault(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if g := vmi.Spec.TerminationGracePeriodSeconds; g == nil || *g != 30 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 30", g)
	}
	vmi = newVMI(v1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr(int64(0))})
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
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if got := vmi.Spec.Domain.Firmware.UUID; got != "1cdc5eb9-6297-506a-8b81-1115691a0322" {
		t.Errorf("firmware uuid = %s, want the name-based UUID of testvmi", got)
	}
	vmi = newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{UUID: "user-uuid", Serial: "s1"}}})
	SetVirtualMachineInstanceDefaults(vmi)
	if fw := vmi.Spec.Domain.Firmware; fw.UUID != "user-uuid" || fw.Serial != "s1" {
		t.Errorf("firmware = %+v, want the user's uuid and serial kept", fw)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	cases := map[string]v1.PullPolicy{
		"fedora":                            v1.PullAlways,
		"fedora:latest":                     v1.PullAlways,
		"quay.io/containerdisks/fedora":     v1.PullAlways,
		"registry:5000/fedora":              v1.PullAlways,
		"registry:5000/fedora:latest":       v1.PullAlways,
		"fedora:41":                         v1.PullIfNotPresent,
		"registry:5000/fedora:41":           v1.PullIfNotPresent,
		"fedora@sha256:0123456789abcdef":    v1.PullIfNotPresent,
		"fedora:latest@sha256:0123456789ab": v1.PullIfNotPresent,
	}
	for image, want := range cases {
		if got := DefaultPullPolicy(image); got != want {
			t.Errorf("DefaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

func TestImagePullPolicyDefaults(t *testing.T) {
	spec := v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "a", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "fedora:latest"}}},
		{Name: "b", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "fedora:41"}}},
		{Name: "c", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "fedora", ImagePullPolicy: v1.PullNever}}},
	}}
	spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "kernel:6.8"}}}
	vmi := newVMI(spec)
	SetVirtualMachineInstanceDefaults(vmi)
	for i, want := range []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever} {
		if got := vmi.Spec.Volumes[i].ContainerDisk.ImagePullPolicy; got != want {
			t.Errorf("volumes[%d] pull policy = %s, want %s", i, got, want)
		}
	}
	if got := vmi.Spec.Domain.Firmware.KernelBoot.Container.ImagePullPolicy; got != v1.PullIfNotPresent {
		t.Errorf("kernel boot pull policy = %s, want IfNotPresent", got)
	}
}

func TestVMIDefaultsAreIdempotent(t *testing.T) {
	vmi := newVMI(withResources("", "2", "1Gi", ""))
	vmi.Spec.Volumes = []v1.Volume{volume("a")}
	SetVirtualMachineInstanceDefaults(vmi)
	once := vmi.DeepCopy()
	SetVirtualMachineInstanceDefaults(vmi)
	if !apiequality.Semantic.DeepEqual(once, vmi) {
		t.Errorf("defaulting twice changed the VMI:\nonce:  %+v\ntwice: %+v", once.Spec, vmi.Spec)
	}
}
