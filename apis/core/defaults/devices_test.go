package defaults

import (
	"testing"

	"github.com/google/uuid"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

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
		{name: "autoattach true", autoattach: ptr.To(true), wantNets: []v1.Network{podNetwork}, wantIfaces: []v1.Interface{masqueradeIface}},
		{name: "autoattach false", autoattach: ptr.To(false)},
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
			name:  "cdrom gets sata, readonly and a closed tray",
			disks: []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{}}}},
			want:  []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA, ReadOnly: ptr.To(true), Tray: v1.TrayStateClosed}}}},
		},
		{
			name:  "cdrom settings kept",
			disks: []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI, ReadOnly: ptr.To(false), Tray: v1.TrayStateOpen}}}},
			want:  []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSCSI, ReadOnly: ptr.To(false), Tray: v1.TrayStateOpen}}}},
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

func TestTerminationGracePeriodStaysUnset(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(vmi)
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		t.Errorf("terminationGracePeriodSeconds = %d, want unset (KubeVirt applies 30 where it is used)", *g)
	}
	vmi = newVMI(v1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr.To(int64(0))})
	SetVirtualMachineInstanceDefaults(vmi)
	if g := vmi.Spec.TerminationGracePeriodSeconds; g == nil || *g != 0 {
		t.Errorf("terminationGracePeriodSeconds = %v, want the user's 0", g)
	}
}

func TestFirmwareUUIDDefault(t *testing.T) {
	first, second := newVMI(v1.VirtualMachineInstanceSpec{}), newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(first)
	SetVirtualMachineInstanceDefaults(second)
	a, b := first.Spec.Domain.Firmware.UUID, second.Spec.Domain.Firmware.UUID
	if _, err := uuid.Parse(string(a)); err != nil {
		t.Fatalf("firmware uuid %q is not a UUID: %v", a, err)
	}
	if a == b {
		t.Errorf("two VMIs named testvmi got the same firmware uuid %s; want random ones", a)
	}
	vmi := newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{UUID: "user-uuid", Serial: "s1"}}})
	SetVirtualMachineInstanceDefaults(vmi)
	if fw := vmi.Spec.Domain.Firmware; fw.UUID != "user-uuid" || fw.Serial != "s1" {
		t.Errorf("firmware = %+v, want the user's uuid and serial kept", fw)
	}
}

func TestRetainVirtualMachineInstanceIdentity(t *testing.T) {
	old := newVMI(v1.VirtualMachineInstanceSpec{})
	SetVirtualMachineInstanceDefaults(old)
	update := newVMI(v1.VirtualMachineInstanceSpec{})
	RetainVirtualMachineInstanceIdentity(update, old)
	SetVirtualMachineInstanceDefaults(update)
	if !apiequality.Semantic.DeepEqual(update.Spec, old.Spec) {
		t.Errorf("an unchanged VMI defaulted on update differs from the stored one:\n got %+v\nwant %+v", update.Spec, old.Spec)
	}
	update = newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: &v1.Firmware{UUID: "mine"}}})
	RetainVirtualMachineInstanceIdentity(update, old)
	if got := update.Spec.Domain.Firmware.UUID; got != "mine" {
		t.Errorf("uuid = %s, want the one the update sets", got)
	}
}

func TestLegacyFirmwareUUID(t *testing.T) {
	// Expected values computed independently (Python's uuid.uuid5) under KubeVirt's namespace
	// 6a1a24a1-4061-4607-8bf4-a3963d0c5895.
	for name, want := range map[string]string{
		"testvm": "5a9fc181-957e-5c32-9e5a-2de5e9673531",
		"my-vm":  "41256f5f-3759-54d0-9c60-26dff9079ab1",
	} {
		if got := LegacyFirmwareUUID(name); string(got) != want {
			t.Errorf("LegacyFirmwareUUID(%q) = %s, want %s", name, got, want)
		}
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
