package validation

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestDiskTargetValidation(t *testing.T) {
	d0 := disksPath + "[0]"
	disk := func(target v1.DiskTarget) v1.Disk {
		return v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{Disk: &target}}
	}
	lun := func(target v1.LunTarget) v1.Disk {
		return v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{LUN: &target}}
	}
	// lunOn makes the first volume a PVC and attaches it as lun.
	lunOn := func(target v1.LunTarget) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[0].VolumeSource = v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}
			s.Domain.Devices.Disks[0] = lun(target)
		}
	}
	runSpecCases(t, []specCase{
		{name: "read-only virtio disk", mutate: setDisk(disk(v1.DiskTarget{Bus: v1.DiskBusVirtio, ReadOnly: true}))},
		{name: "read-only scsi disk", mutate: setDisk(disk(v1.DiskTarget{Bus: v1.DiskBusSCSI, ReadOnly: true}))},
		{name: "read-only sata disk", mutate: setDisk(disk(v1.DiskTarget{Bus: v1.DiskBusSATA, ReadOnly: true})),
			want: []fe{{invalid, d0 + ".disk.readonly"}}},
		{name: "read-only sata cdrom", mutate: setDisk(v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{
			CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA, ReadOnly: ptr.To(true)}}})},
		{name: "lun on a pvc", mutate: lunOn(v1.LunTarget{Bus: v1.DiskBusSCSI, ReadOnly: true})},
		{name: "lun on a dataVolume", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[0].VolumeSource = v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "dv"}}
			s.Domain.Devices.Disks[0] = lun(v1.LunTarget{})
		}},
		{name: "lun on a containerDisk", mutate: setDisk(lun(v1.LunTarget{Bus: v1.DiskBusSCSI})),
			want: []fe{{invalid, d0 + ".lun"}}},
		{name: "lun with reservation on scsi", mutate: lunOn(v1.LunTarget{Bus: v1.DiskBusSCSI, Reservation: true})},
		{name: "lun with reservation on virtio", mutate: lunOn(v1.LunTarget{Bus: v1.DiskBusVirtio, Reservation: true}),
			want: []fe{{invalid, d0 + ".lun.bus"}}},
		{name: "lun on unknown bus", mutate: lunOn(v1.LunTarget{Bus: "ide"}), want: []fe{{notSupported, d0 + ".lun.bus"}}},
		{name: "disk and lun", mutate: setDisk(v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{
			Disk: &v1.DiskTarget{}, LUN: &v1.LunTarget{}}}), want: []fe{{invalid, d0}, {invalid, d0 + ".lun"}}},
		{name: "serial", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0].Serial = "WD-0123_4.5+6" }},
		{name: "serial with slash", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0].Serial = "a/b" },
			want: []fe{{invalid, d0 + ".serial"}}},
		{name: "serial with non-ASCII", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0].Serial = "disk-é" },
			want: []fe{{invalid, d0 + ".serial"}}},
		{name: "serial of 256", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0].Serial = strings.Repeat("s", 256) }},
		{name: "serial of 257", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0].Serial = strings.Repeat("s", 257) },
			want: []fe{{tooLong, d0 + ".serial"}}},
	})
}

func TestBootOrderValidation(t *testing.T) {
	boot := func(disk0, disk1, iface0 *uint32) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].BootOrder = disk0
			s.Domain.Devices.Disks[1].BootOrder = disk1
			s.Domain.Devices.Interfaces[0].BootOrder = iface0
		}
	}
	one, two, three, zero := ptr.To(uint32(1)), ptr.To(uint32(2)), ptr.To(uint32(3)), ptr.To(uint32(0))
	iface0 := ifacesPath + "[0].bootOrder"
	runSpecCases(t, []specCase{
		{name: "disks and interface distinct", mutate: boot(one, two, three)},
		{name: "network boot first", mutate: boot(two, nil, one)},
		{name: "only one", mutate: boot(nil, one, nil)},
		{name: "disk zero", mutate: boot(zero, one, nil), want: []fe{{invalid, disksPath + "[0].bootOrder"}}},
		{name: "interface zero", mutate: boot(one, nil, zero), want: []fe{{invalid, iface0}}},
		{name: "duplicate disks", mutate: boot(one, one, nil), want: []fe{{invalid, disksPath + "[1].bootOrder"}}},
		{name: "interface repeats a disk's", mutate: boot(one, two, two), want: []fe{{invalid, iface0}}},
	})
}

func TestHostDiskValidation(t *testing.T) {
	hd := volumesPath + "[2].hostDisk"
	host := func(h v1.HostDisk) func(s *v1.VirtualMachineInstanceSpec) {
		return addVolume("host", v1.VolumeSource{HostDisk: &h})
	}
	runSpecCases(t, []specCase{
		{name: "existing image", mutate: host(v1.HostDisk{Path: "/var/lib/disks/a.img", Type: v1.HostDiskExists})},
		{name: "existing image, zero capacity as KubeVirt's client sends it", mutate: host(v1.HostDisk{
			Path: "/var/lib/disks/a.img", Type: v1.HostDiskExists, Capacity: q("0")})},
		{name: "created image", mutate: host(v1.HostDisk{Path: "/var/lib/disks/a.img", Type: v1.HostDiskExistsOrCreate,
			Capacity: q("10Gi"), Shared: ptr.To(true)})},
		{name: "no path", mutate: host(v1.HostDisk{Type: v1.HostDiskExists}), want: []fe{{required, hd + ".path"}}},
		{name: "relative path", mutate: host(v1.HostDisk{Path: "disks/a.img", Type: v1.HostDiskExists}),
			want: []fe{{invalid, hd + ".path"}}},
		{name: "no type", mutate: host(v1.HostDisk{Path: "/a.img"}), want: []fe{{notSupported, hd + ".type"}}},
		{name: "unknown type", mutate: host(v1.HostDisk{Path: "/a.img", Type: "File"}), want: []fe{{notSupported, hd + ".type"}}},
		{name: "create without capacity", mutate: host(v1.HostDisk{Path: "/a.img", Type: v1.HostDiskExistsOrCreate}),
			want: []fe{{required, hd + ".capacity"}}},
		{name: "capacity with type Disk", mutate: host(v1.HostDisk{Path: "/a.img", Type: v1.HostDiskExists, Capacity: q("1Gi")}),
			want: []fe{{invalid, hd + ".capacity"}}},
		{name: "negative capacity", mutate: host(v1.HostDisk{Path: "/a.img", Type: v1.HostDiskExistsOrCreate, Capacity: q("-1Gi")}),
			want: []fe{{invalid, hd + ".capacity"}}},
		{name: "hostDisk and emptyDisk", mutate: addVolume("host", v1.VolumeSource{
			HostDisk:  &v1.HostDisk{Path: "/a.img", Type: v1.HostDiskExists},
			EmptyDisk: &v1.EmptyDiskSource{Capacity: q("1Gi")}}), want: []fe{{invalid, volumesPath + "[2]"}}},
	})
}

func TestContainerDiskPathValidation(t *testing.T) {
	cd := volumesPath + "[2].containerDisk.path"
	at := func(p string) func(s *v1.VirtualMachineInstanceSpec) {
		return addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disks:1", Path: p}})
	}
	runSpecCases(t, []specCase{
		{name: "absolute", mutate: at("/disk/fedora.qcow2")},
		{name: "relative", mutate: at("disk/fedora.qcow2"), want: []fe{{invalid, cd}}},
		{name: "with ..", mutate: at("/disk/../etc/shadow"), want: []fe{{invalid, cd}}},
		{name: "doubled slash", mutate: at("/disk//fedora.qcow2"), want: []fe{{invalid, cd}}},
		{name: "root", mutate: at("/"), want: []fe{{invalid, cd}}},
	})
}
