package vmi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// UnsupportedReason is the reason of a VMI that Vireo refused to start because it asks for
// something Vireo stores (KubeVirt's manifests carry it) but cannot run yet.
const UnsupportedReason = "Unsupported"

// unsupportedFields returns the paths of the fields of spec that Vireo accepts but cannot run yet.
// A VMI that sets any of them fails when it would start, with these paths in its reason, instead
// of running without them. A feature given as enabled: false counts too: Vireo cannot promise the
// machine type's setting is off either.
func unsupportedFields(spec *v1.VirtualMachineInstanceSpec) []string {
	u := &unsupported{}
	u.domain(&spec.Domain)
	u.devices(&spec.Domain.Devices)
	for i := range spec.Domain.Devices.Disks {
		u.disk(&spec.Domain.Devices.Disks[i], fmt.Sprintf("spec.domain.devices.disks[%d]", i))
	}
	for i := range spec.Domain.Devices.Interfaces {
		u.iface(&spec.Domain.Devices.Interfaces[i], fmt.Sprintf("spec.domain.devices.interfaces[%d]", i))
	}
	for i, n := range spec.Networks {
		path := fmt.Sprintf("spec.networks[%d]", i)
		u.add(n.Multus != nil, path+".multus")
		u.add(n.ResourceClaim != nil, path+".resourceClaim")
	}
	for i := range spec.Volumes {
		u.volume(&spec.Volumes[i].VolumeSource, fmt.Sprintf("spec.volumes[%d]", i))
	}
	u.add(spec.ServiceAccountName != "", "spec.serviceAccountName")
	u.add(len(spec.ResourceClaims) > 0, "spec.resourceClaims")
	u.add(len(spec.UtilityVolumes) > 0, "spec.utilityVolumes")
	return u.paths
}

// unsupported collects the paths of fields that are set and that Vireo cannot run.
type unsupported struct{ paths []string }

func (u *unsupported) add(set bool, path string) {
	if set {
		u.paths = append(u.paths, path)
	}
}

func (u *unsupported) domain(d *v1.DomainSpec) {
	if c := d.CPU; c != nil {
		u.add(c.DedicatedCPUPlacement, "spec.domain.cpu.dedicatedCpuPlacement")
		u.add(c.IsolateEmulatorThread, "spec.domain.cpu.isolateEmulatorThread")
		u.add(c.MaxSockets != 0, "spec.domain.cpu.maxSockets")
		u.add(len(c.Features) > 0, "spec.domain.cpu.features")
		u.add(c.NUMA != nil, "spec.domain.cpu.numa")
		u.add(c.Realtime != nil, "spec.domain.cpu.realtime")
	}
	if m := d.Memory; m != nil {
		u.add(m.Hugepages != nil, "spec.domain.memory.hugepages")
		u.add(m.MaxGuest != nil, "spec.domain.memory.maxGuest")
		u.add(m.ReservedOverhead != nil, "spec.domain.memory.reservedOverhead")
	}
	if f := d.Features; f != nil {
		u.add(f.Hyperv != nil, "spec.domain.features.hyperv")
		u.add(f.HypervPassthrough != nil, "spec.domain.features.hypervPassthrough")
		u.add(f.KVM != nil, "spec.domain.features.kvm")
		u.add(f.Pvspinlock != nil, "spec.domain.features.pvspinlock")
	}
	u.add(d.Firmware != nil && d.Firmware.ACPI != nil, "spec.domain.firmware.acpi")
	u.add(d.Resources.OvercommitGuestOverhead, "spec.domain.resources.overcommitGuestOverhead")
	u.add(d.IOThreadsPolicy != nil, "spec.domain.ioThreadsPolicy")
	u.add(d.IOThreads != nil, "spec.domain.ioThreads")
	u.add(d.Chassis != nil, "spec.domain.chassis")
	u.add(d.LaunchSecurity != nil, "spec.domain.launchSecurity")
	u.add(d.RebootPolicy != nil && *d.RebootPolicy != "Reboot", "spec.domain.rebootPolicy")
}

func (u *unsupported) devices(d *v1.Devices) {
	const p = "spec.domain.devices."
	u.add(d.TPM != nil, p+"tpm")
	u.add(isTrue(d.UseVirtioTransitional), p+"useVirtioTransitional")
	u.add(d.Watchdog != nil, p+"watchdog")
	u.add(len(d.Inputs) > 0, p+"inputs")
	u.add(isTrue(d.LogSerialConsole), p+"logSerialConsole")
	u.add(isTrue(d.AutoattachInputDevice), p+"autoattachInputDevice")
	u.add(isTrue(d.AutoattachVSOCK), p+"autoattachVSOCK")
	u.add(isTrue(d.BlockMultiQueue), p+"blockMultiQueue")
	u.add(isTrue(d.NetworkInterfaceMultiQueue), p+"networkInterfaceMultiqueue")
	u.add(len(d.GPUs) > 0, p+"gpus")
	u.add(d.DownwardMetrics != nil, p+"downwardMetrics")
	u.add(len(d.PanicDevices) > 0, p+"panicDevices")
	u.add(len(d.Filesystems) > 0, p+"filesystems")
	u.add(len(d.HostDevices) > 0, p+"hostDevices")
	u.add(d.ClientPassthrough != nil, p+"clientPassthrough")
	u.add(d.Sound != nil, p+"sound")
	u.add(d.Video != nil && d.Video.Type != "" && d.Video.Type != "vga", p+"video") // the display is VGA
}

func (u *unsupported) disk(d *v1.Disk, path string) {
	u.add(d.LUN != nil, path+".lun")
	u.add(d.Disk != nil && d.Disk.PciAddress != "", path+".disk.pciAddress")
	u.add(d.DedicatedIOThread != nil, path+".dedicatedIOThread")
	u.add(d.IO != "", path+".io")
	u.add(d.Tag != "", path+".tag")
	u.add(d.BlockSize != nil, path+".blockSize")
	u.add(isTrue(d.Shareable), path+".shareable")
	u.add(d.ErrorPolicy != nil, path+".errorPolicy")
	u.add(isTrue(d.ChangedBlockTracking), path+".changedBlockTracking")
}

func (u *unsupported) iface(i *v1.Interface, path string) {
	for _, binding := range i.Bindings() {
		u.add(binding != "masquerade", path+"."+binding)
	}
	u.add(len(i.PortRanges) > 0, path+".portRanges")
	u.add(i.PciAddress != "", path+".pciAddress")
	u.add(i.DHCPOptions != nil, path+".dhcpOptions")
	u.add(i.Tag != "", path+".tag")
	u.add(i.ACPIIndex != 0, path+".acpiIndex")
	u.add(i.State != "" && i.State != "up", path+".state")
}

func (u *unsupported) volume(v *v1.VolumeSource, path string) {
	u.add(v.HostDisk != nil, path+".hostDisk")
	u.add(v.Sysprep != nil, path+".sysprep")
	u.add(v.Ephemeral != nil, path+".ephemeral")
	u.add(v.DownwardMetrics != nil, path+".downwardMetrics")
	u.add(v.MemoryDump != nil, path+".memoryDump")
	u.add(v.ContainerPath != nil, path+".containerPath")
	u.add(v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.Hotpluggable, path+".persistentVolumeClaim.hotpluggable")
	u.add(v.DataVolume != nil && v.DataVolume.Hotpluggable, path+".dataVolume.hotpluggable")
}

func isTrue(b *bool) bool { return b != nil && *b }

// refuseUnsupported fails a VMI that has not started yet and asks for what Vireo cannot run. It
// reports whether it did.
func (c *Controller) refuseUnsupported(ctx context.Context, vmi *v1.VirtualMachineInstance) (bool, error) {
	if vmi.DeletionTimestamp != nil || (vmi.Status.Phase != "" && vmi.Status.Phase != v1.Pending) {
		return false, nil
	}
	paths := unsupportedFields(&vmi.Spec)
	if len(paths) == 0 {
		return false, nil
	}
	message := "Vireo cannot run " + strings.Join(paths, ", ") + " yet; remove them from the VMI (or its VirtualMachine's template) and create it again"
	updated := vmi.DeepCopy()
	now := metav1.Now()
	updated.Status.Phase = v1.Failed
	updated.Status.Reason = UnsupportedReason
	updated.Status.PhaseTransitionTimestamps = append(updated.Status.PhaseTransitionTimestamps,
		v1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: v1.Failed, PhaseTransitionTimestamp: now})
	updated.Status.Conditions = slices.DeleteFunc(updated.Status.Conditions, func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Type == v1.VirtualMachineInstanceSynchronized
	})
	updated.Status.Conditions = append(updated.Status.Conditions, v1.VirtualMachineInstanceCondition{
		Type: v1.VirtualMachineInstanceSynchronized, Status: v1.ConditionFalse, LastTransitionTime: now,
		Reason: UnsupportedReason, Message: message,
	})
	_, err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err == nil {
		klog.FromContext(ctx).Info("Refused to start a VMI that asks for what Vireo cannot run", "vmi", klog.KObj(vmi), "fields", paths)
	}
	return true, err
}
