package validation

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

const (
	disksPath   = "spec.domain.devices.disks"
	volumesPath = "spec.volumes"
)

// addVolume returns a mutation that adds a volume with src and a plain disk for it.
func addVolume(name string, src v1.VolumeSource) func(s *v1.VirtualMachineInstanceSpec) {
	return func(s *v1.VirtualMachineInstanceSpec) {
		s.Volumes = append(s.Volumes, v1.Volume{Name: name, VolumeSource: src})
		s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, v1.Disk{Name: name})
	}
}

// setDisk returns a mutation that replaces the first disk (rootdisk) with d.
func setDisk(d v1.Disk) func(s *v1.VirtualMachineInstanceSpec) {
	return func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[0] = d }
}

func TestDiskVolumePairing(t *testing.T) {
	runSpecCases(t, []specCase{
		{name: "disk without volume", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, v1.Disk{Name: "extra"})
		}, want: []fe{{invalid, disksPath + "[2].name"}}},
		{name: "volume without disk", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks = s.Domain.Devices.Disks[:1]
		}, want: []fe{{invalid, volumesPath + "[1].name"}}},
		{name: "duplicate volume", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes = append(s.Volumes, s.Volumes[0])
		}, want: []fe{{duplicate, volumesPath + "[2].name"}}},
		{name: "duplicate disk", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks = append(s.Domain.Devices.Disks, s.Domain.Devices.Disks[0])
		}, want: []fe{{duplicate, disksPath + "[2].name"}}},
		{name: "volume name not a DNS label", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[0].Name, s.Domain.Devices.Disks[0].Name = "Root_Disk", "Root_Disk"
		}, want: []fe{{invalid, volumesPath + "[0].name"}, {invalid, disksPath + "[0].name"}}},
		{name: "unnamed volume and disk", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[0].Name, s.Domain.Devices.Disks[0].Name = "", ""
		}, want: []fe{{required, volumesPath + "[0].name"}, {required, disksPath + "[0].name"}}},
	})
}

func TestDiskValidation(t *testing.T) {
	bus := func(b v1.DiskBus) v1.Disk {
		return v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: b}}}
	}
	cdrom := func(b v1.DiskBus) v1.Disk {
		return v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{Bus: b, ReadOnly: ptr.To(true)}}}
	}
	runSpecCases(t, []specCase{
		{name: "sata", mutate: setDisk(bus(v1.DiskBusSATA))},
		{name: "scsi", mutate: setDisk(bus(v1.DiskBusSCSI))},
		{name: "usb", mutate: setDisk(bus(v1.DiskBusUSB))},
		{name: "empty bus", mutate: setDisk(bus(""))},
		{name: "ide refused", mutate: setDisk(bus("ide")), want: []fe{{notSupported, disksPath + "[0].disk.bus"}}},
		{name: "cdrom on sata", mutate: setDisk(cdrom(v1.DiskBusSATA))},
		{name: "cdrom on virtio refused", mutate: setDisk(cdrom(v1.DiskBusVirtio)), want: []fe{{notSupported, disksPath + "[0].cdrom.bus"}}},
		{name: "neither disk nor cdrom", mutate: setDisk(v1.Disk{Name: "rootdisk"})},
		{name: "disk and cdrom", mutate: setDisk(v1.Disk{Name: "rootdisk", DiskDevice: v1.DiskDevice{
			Disk: &v1.DiskTarget{}, CDRom: &v1.CDRomTarget{}}}), want: []fe{{invalid, disksPath + "[0]"}}},
		{name: "cache modes", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks[0].Cache = v1.CacheNone
			s.Domain.Devices.Disks[1].Cache = v1.CacheWriteBack
		}},
		{name: "unknown cache", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.Disks[1].Cache = "unsafe" },
			want: []fe{{notSupported, disksPath + "[1].cache"}}},
	})
}

func TestVolumeSourceValidation(t *testing.T) {
	v2 := volumesPath + "[2]"
	runSpecCases(t, []specCase{
		{name: "pvc", mutate: addVolume("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-pvc"}})},
		{name: "pvc without claim name", mutate: addVolume("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}),
			want: []fe{{required, v2 + ".persistentVolumeClaim.claimName"}}},
		{name: "pvc with bad claim name", mutate: addVolume("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "Data"}}),
			want: []fe{{invalid, v2 + ".persistentVolumeClaim.claimName"}}},
		{name: "dataVolume", mutate: addVolume("data", v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "fedora-dv"}})},
		{name: "dataVolume without name", mutate: addVolume("data", v1.VolumeSource{DataVolume: &v1.DataVolumeSource{}}),
			want: []fe{{required, v2 + ".dataVolume.name"}}},
		{name: "emptyDisk", mutate: addVolume("scratch", v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: q("1Gi")}})},
		{name: "emptyDisk of zero", mutate: addVolume("scratch", v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}),
			want: []fe{{invalid, v2 + ".emptyDisk.capacity"}}},
		{name: "emptyDisk negative", mutate: addVolume("scratch", v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: q("-1Gi")}}),
			want: []fe{{invalid, v2 + ".emptyDisk.capacity"}}},
		{name: "containerDisk without image", mutate: addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{}}),
			want: []fe{{required, v2 + ".containerDisk.image"}}},
		{name: "containerDisk pull policy Never", mutate: addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "a:1", ImagePullPolicy: v1.PullNever}})},
		{name: "containerDisk bad pull policy", mutate: addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "a:1", ImagePullPolicy: "Sometimes"}}),
			want: []fe{{notSupported, v2 + ".containerDisk.imagePullPolicy"}}},
		{name: "containerDisk imagePullSecret", mutate: addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "a:1", ImagePullSecret: "pull"}})},
		{name: "containerDisk bad imagePullSecret", mutate: addVolume("cd", v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "a:1", ImagePullSecret: "Bad_Name"}}),
			want: []fe{{invalid, v2 + ".containerDisk.imagePullSecret"}}},
		{name: "no source", mutate: addVolume("nothing", v1.VolumeSource{}), want: []fe{{required, v2}}},
		{name: "two sources", mutate: addVolume("two", v1.VolumeSource{
			DataVolume: &v1.DataVolumeSource{Name: "dv"}, EmptyDisk: &v1.EmptyDiskSource{Capacity: q("1Gi")}}),
			want: []fe{{invalid, v2}}},
	})
}

func TestCloudInitValidation(t *testing.T) {
	ci := volumesPath + "[1].cloudInitNoCloud"
	set := func(c v1.CloudInitNoCloudSource) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Volumes[1].CloudInitNoCloud = &c }
	}
	b64 := base64.StdEncoding.EncodeToString
	big := strings.Repeat("x", MaxInlineCloudInitBytes+1)
	limit := strings.Repeat("x", MaxInlineCloudInitBytes)
	runSpecCases(t, []specCase{
		{name: "userDataBase64", mutate: set(v1.CloudInitNoCloudSource{UserDataBase64: b64([]byte("#cloud-config\n"))})},
		{name: "secretRef", mutate: set(v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{Name: "ud"}})},
		{name: "secretRef without name", mutate: set(v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{}}),
			want: []fe{{required, ci + ".secretRef.name"}}},
		{name: "networkDataSecretRef only", mutate: set(v1.CloudInitNoCloudSource{NetworkDataSecretRef: &v1.LocalObjectReference{Name: "nd"}})},
		{name: "networkData twice", mutate: set(v1.CloudInitNoCloudSource{NetworkData: "version: 2\n", NetworkDataSecretRef: &v1.LocalObjectReference{Name: "nd"}}),
			want: []fe{{invalid, ci}}},
		{name: "networkDataSecretRef without name", mutate: set(v1.CloudInitNoCloudSource{UserData: "a", NetworkDataSecretRef: &v1.LocalObjectReference{}}),
			want: []fe{{required, ci + ".networkDataSecretRef.name"}}},
		{name: "network data only", mutate: set(v1.CloudInitNoCloudSource{NetworkData: "version: 2\n"})},
		{name: "networkDataBase64 only", mutate: set(v1.CloudInitNoCloudSource{NetworkDataBase64: b64([]byte("version: 2\n"))})},
		{name: "networkData and networkDataBase64", mutate: set(v1.CloudInitNoCloudSource{NetworkData: "version: 2\n", NetworkDataBase64: b64([]byte("version: 2\n"))}),
			want: []fe{{invalid, ci}}},
		{name: "networkDataBase64 not base64", mutate: set(v1.CloudInitNoCloudSource{NetworkDataBase64: "%%%"}),
			want: []fe{{invalid, ci + ".networkDataBase64"}}},
		{name: "networkDataBase64 too large", mutate: set(v1.CloudInitNoCloudSource{NetworkDataBase64: b64([]byte(big))}),
			want: []fe{{tooLong, ci + ".networkDataBase64"}}},
		{name: "config drive", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[1].CloudInitNoCloud = nil
			s.Volumes[1].CloudInitConfigDrive = &v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n", NetworkDataBase64: b64([]byte("{}"))}
		}},
		{name: "config drive without data", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[1].CloudInitNoCloud = nil
			s.Volumes[1].CloudInitConfigDrive = &v1.CloudInitConfigDriveSource{}
		}, want: []fe{{required, volumesPath + "[1].cloudInitConfigDrive"}}},
		{name: "config drive and NoCloud", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes[1].CloudInitConfigDrive = &v1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}
		}, want: []fe{{invalid, volumesPath + "[1]"}}},
		{name: "user and network data", mutate: set(v1.CloudInitNoCloudSource{UserData: "#cloud-config\n", NetworkData: "version: 2\n"})},
		{name: "nothing", mutate: set(v1.CloudInitNoCloudSource{}), want: []fe{{required, ci}}},
		{name: "two user-data sources", mutate: set(v1.CloudInitNoCloudSource{UserData: "a", UserDataBase64: b64([]byte("a"))}),
			want: []fe{{invalid, ci}}},
		{name: "three user-data sources", mutate: set(v1.CloudInitNoCloudSource{UserData: "a", UserDataBase64: b64([]byte("a")),
			UserDataSecretRef: &v1.LocalObjectReference{Name: "ud"}}), want: []fe{{invalid, ci}}},
		{name: "bad base64", mutate: set(v1.CloudInitNoCloudSource{UserDataBase64: "not base64!"}),
			want: []fe{{invalid, ci + ".userDataBase64"}}},
		{name: "userData at the limit", mutate: set(v1.CloudInitNoCloudSource{UserData: limit, NetworkData: limit})},
		{name: "userData too long", mutate: set(v1.CloudInitNoCloudSource{UserData: big}), want: []fe{{tooLong, ci + ".userData"}}},
		{name: "decoded userDataBase64 too long", mutate: set(v1.CloudInitNoCloudSource{UserDataBase64: b64([]byte(big))}),
			want: []fe{{tooLong, ci + ".userDataBase64"}}},
		{name: "networkData too long", mutate: set(v1.CloudInitNoCloudSource{UserData: "a", NetworkData: big}),
			want: []fe{{tooLong, ci + ".networkData"}}},
	})
}

func TestCloudInitTooLongMessage(t *testing.T) {
	vmi := validVMI()
	vmi.Spec.Volumes[1].CloudInitNoCloud.UserData = strings.Repeat("x", 3000)
	errs := ValidateVirtualMachineInstance(vmi)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "secretRef") || strings.Contains(errs[0].Error(), "xxxx") {
		t.Errorf("errors = %v, want one that points to secretRef and does not repeat the data", errs)
	}
}
