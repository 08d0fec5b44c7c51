package defaults

import (
	"strings"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// SetPodNetworkDefaults connects a VMI that has neither networks nor interfaces to the pod network
// through a masquerade interface, unless autoattachPodInterface is false. Masquerade (not KubeVirt's
// bridge) is the default because it is the only binding Vireo's runtime implements.
func SetPodNetworkDefaults(spec *v1.VirtualMachineInstanceSpec) {
	devices := &spec.Domain.Devices
	if len(spec.Networks) > 0 || len(devices.Interfaces) > 0 {
		return
	}
	if devices.AutoattachPodInterface != nil && !*devices.AutoattachPodInterface {
		return
	}
	spec.Networks = []v1.Network{{
		Name:          DefaultNetworkName,
		NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}},
	}}
	devices.Interfaces = []v1.Interface{{
		Name:                   DefaultNetworkName,
		InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}},
	}}
}

// setDiskDefaults adds a disk for every volume that has none, attaches every disk that says none of
// disk, cdrom and lun as a disk, and fills in buses and the CD-ROM read-only flag and tray.
func setDiskDefaults(spec *v1.VirtualMachineInstanceSpec) {
	AddVolumeDisks(spec)
	devices := &spec.Domain.Devices
	for i := range devices.Disks {
		d := &devices.Disks[i]
		if d.Disk == nil && d.CDRom == nil && d.LUN == nil {
			d.Disk = &v1.DiskTarget{}
		}
		if d.Disk != nil && d.Disk.Bus == "" {
			d.Disk.Bus = DefaultDiskBus
		}
		if d.CDRom != nil {
			if d.CDRom.Bus == "" {
				d.CDRom.Bus = DefaultDiskBus
			}
			if d.CDRom.ReadOnly == nil {
				readOnly := true
				d.CDRom.ReadOnly = &readOnly
			}
			if d.CDRom.Tray == "" {
				d.CDRom.Tray = v1.TrayStateClosed
			}
		}
	}
}

// AddVolumeDisks adds a disk (of no kind or bus yet) for every volume that has none.
func AddVolumeDisks(spec *v1.VirtualMachineInstanceSpec) {
	devices := &spec.Domain.Devices
	named := make(map[string]bool, len(devices.Disks))
	for _, d := range devices.Disks {
		named[d.Name] = true
	}
	for _, v := range spec.Volumes {
		if !named[v.Name] {
			devices.Disks = append(devices.Disks, v1.Disk{Name: v.Name})
			named[v.Name] = true
		}
	}
}

// setImagePullPolicyDefaults sets the pull policy of container disks and the kernel boot container.
func setImagePullPolicyDefaults(spec *v1.VirtualMachineInstanceSpec) {
	for i := range spec.Volumes {
		cd := spec.Volumes[i].ContainerDisk
		if cd != nil && cd.ImagePullPolicy == "" {
			cd.ImagePullPolicy = DefaultPullPolicy(cd.Image)
		}
	}
	fw := spec.Domain.Firmware
	if fw != nil && fw.KernelBoot != nil && fw.KernelBoot.Container != nil {
		c := fw.KernelBoot.Container
		if c.ImagePullPolicy == "" {
			c.ImagePullPolicy = DefaultPullPolicy(c.Image)
		}
	}
}

// DefaultPullPolicy returns the pull policy Kubernetes would pick for image: Always for an image
// tagged "latest" or carrying no tag nor digest, IfNotPresent otherwise.
func DefaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	tag := ""
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		tag = image[i+1:]
	}
	if tag == "" || tag == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
