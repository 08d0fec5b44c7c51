package defaults

import (
	"strings"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// DefaultMachineType is the machine type a guest gets when it names none (KubeVirt's amd64 default).
const DefaultMachineType = "q35"

// DefaultDiskBus is the bus of a disk or CD-ROM that names none. SATA is KubeVirt's amd64 default
// because it boots without virtio drivers in the guest.
const DefaultDiskBus = v1.DiskBusSATA

// DefaultNetworkName is the name of the pod network and interface added to a VMI that has none.
const DefaultNetworkName = "default"

// SetVirtualMachineInstanceDefaults fills in the defaults of a VMI that is being created, in
// KubeVirt's order: machine type, CPU topology and request, guest memory, the pod network, disks
// for volumes and their buses, the termination grace period, the firmware UUID and image pull
// policies. Fields the user set are never changed. The lifecycle fields (finalizer, phase) are the
// strategy's business, not this function's.
func SetVirtualMachineInstanceDefaults(vmi *v1.VirtualMachineInstance) {
	spec := &vmi.Spec
	setMachineDefaults(&spec.Domain)
	setCPUTopologyDefaults(&spec.Domain)
	setCPURequestDefaults(&spec.Domain.Resources)
	setGuestMemoryDefaults(&spec.Domain)
	setPodNetworkDefaults(spec)
	setDiskDefaults(spec)
	if spec.TerminationGracePeriodSeconds == nil {
		grace := v1.DefaultGracePeriodSeconds
		spec.TerminationGracePeriodSeconds = &grace
	}
	setFirmwareUUIDDefault(&spec.Domain, vmi.Name)
	setImagePullPolicyDefaults(spec)
}

// setMachineDefaults sets domain.machine.type to q35 when it is empty.
func setMachineDefaults(domain *v1.DomainSpec) {
	if domain.Machine == nil {
		domain.Machine = &v1.Machine{}
	}
	if domain.Machine.Type == "" {
		domain.Machine.Type = DefaultMachineType
	}
}

// setCPUTopologyDefaults gives the guest a complete sockets/cores/threads topology. With no
// topology at all, the guest gets one socket per vCPU of the CPU limit (or else the request),
// rounded up, and one core and thread each; with a partial topology the missing counts are 1.
// The CPU model is deliberately left empty: Vireo may run under software emulation (TCG), where
// host-model is not available, so the node agent picks the model.
func setCPUTopologyDefaults(domain *v1.DomainSpec) {
	if domain.CPU == nil {
		domain.CPU = &v1.CPU{}
	}
	cpu := domain.CPU
	if cpu.Sockets == 0 && cpu.Cores == 0 && cpu.Threads == 0 {
		cpu.Sockets = vCPUsFromResources(&domain.Resources)
		cpu.Cores, cpu.Threads = 1, 1
		return
	}
	if cpu.Sockets == 0 {
		cpu.Sockets = 1
	}
	if cpu.Cores == 0 {
		cpu.Cores = 1
	}
	if cpu.Threads == 0 {
		cpu.Threads = 1
	}
}

// vCPUsFromResources returns the whole number of vCPUs the CPU limit (or else the CPU request)
// asks for, rounded up, and at least 1.
func vCPUsFromResources(res *v1.ResourceRequirements) uint32 {
	q, ok := res.Limits[v1.ResourceCPU]
	if !ok {
		q, ok = res.Requests[v1.ResourceCPU]
	}
	if !ok {
		return 1
	}
	milli := q.MilliValue()
	if milli <= 1000 {
		return 1
	}
	vcpus := (milli + 999) / 1000
	if vcpus > int64(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(vcpus)
}

// setCPURequestDefaults copies the CPU limit to the CPU request when only a limit is set, as a pod would.
func setCPURequestDefaults(res *v1.ResourceRequirements) {
	limit, hasLimit := res.Limits[v1.ResourceCPU]
	if !hasLimit {
		return
	}
	if _, hasRequest := res.Requests[v1.ResourceCPU]; hasRequest {
		return
	}
	if res.Requests == nil {
		res.Requests = v1.ResourceList{}
	}
	res.Requests[v1.ResourceCPU] = limit.DeepCopy()
}

// setGuestMemoryDefaults sets domain.memory.guest from the memory request, or else the memory limit.
func setGuestMemoryDefaults(domain *v1.DomainSpec) {
	if domain.Memory != nil && domain.Memory.Guest != nil {
		return
	}
	q, ok := domain.Resources.Requests[v1.ResourceMemory]
	if !ok {
		q, ok = domain.Resources.Limits[v1.ResourceMemory]
	}
	if !ok {
		return
	}
	if domain.Memory == nil {
		domain.Memory = &v1.Memory{}
	}
	guest := q.DeepCopy()
	domain.Memory.Guest = &guest
}

// setPodNetworkDefaults connects a VMI that has neither networks nor interfaces to the pod network
// through a masquerade interface, unless autoattachPodInterface is false. Masquerade (not KubeVirt's
// bridge) is the default because it is the only binding Vireo's runtime implements.
func setPodNetworkDefaults(spec *v1.VirtualMachineInstanceSpec) {
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

// setDiskDefaults adds a disk for every volume that has none, attaches every disk that says neither
// disk nor cdrom as a disk, and fills in buses and the CD-ROM read-only flag.
func setDiskDefaults(spec *v1.VirtualMachineInstanceSpec) {
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
	for i := range devices.Disks {
		d := &devices.Disks[i]
		if d.Disk == nil && d.CDRom == nil {
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
		}
	}
}

// setFirmwareUUIDDefault gives the guest a stable SMBIOS UUID derived from the object's name, so
// that the VMIs a VirtualMachine creates one after another present the same system UUID.
func setFirmwareUUIDDefault(domain *v1.DomainSpec, name string) {
	if domain.Firmware == nil {
		domain.Firmware = &v1.Firmware{}
	}
	if domain.Firmware.UUID == "" {
		domain.Firmware.UUID = FirmwareUUID(name)
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
