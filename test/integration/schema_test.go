package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestKubeVirtSchemaFieldsAreStored creates a VMI using the KubeVirt fields Vireo stores but does
// not run yet (CPU pinning, features, clock, TPM, a read-only disk, a host disk, network boot, a
// priority class) and reads them back unchanged. (A lun disk is left out: the VMI defaults still
// add a disk target to it; the validation of lun disks is unit-tested.)
func TestKubeVirtSchemaFieldsAreStored(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	on, one, two := true, uint32(1), uint32(2)
	retries, tz := uint32(8191), v1.ClockOffsetTimezone("Europe/Berlin")
	vmi := newVMI("schema")
	spec := &vmi.Spec
	spec.PriorityClassName = "vm-high"
	spec.Domain.Resources.Requests[v1.ResourceCPU] = mustQuantity("2")
	spec.Domain.Resources.Limits = v1.ResourceList{v1.ResourceCPU: mustQuantity("2"), v1.ResourceMemory: mustQuantity("64Mi")}
	spec.Domain.CPU = &v1.CPU{Sockets: 2, Cores: 1, Threads: 1, DedicatedCPUPlacement: true, IsolateEmulatorThread: true}
	spec.Domain.Firmware = &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{}}}
	spec.Domain.Features = &v1.Features{
		SMM:  &v1.FeatureState{},
		APIC: &v1.FeatureAPIC{EndOfInterrupt: true},
		Hyperv: &v1.FeatureHyperv{Relaxed: &v1.FeatureState{Enabled: &on}, VPIndex: &v1.FeatureState{},
			SyNIC: &v1.FeatureState{}, SyNICTimer: &v1.SyNICTimer{Direct: &v1.FeatureState{}},
			Spinlocks: &v1.FeatureSpinlocks{Retries: &retries}, TLBFlush: &v1.TLBFlush{Extended: &v1.FeatureState{}}},
	}
	spec.Domain.Clock = &v1.Clock{ClockOffset: v1.ClockOffset{Timezone: &tz},
		Timer: &v1.Timer{RTC: &v1.RTCTimer{TickPolicy: v1.RTCTickPolicyCatchup, Track: v1.TrackGuest}}}
	spec.Domain.Devices.TPM = &v1.TPMDevice{Persistent: &on}
	spec.Domain.Devices.Disks = []v1.Disk{
		{Name: "root", BootOrder: &two, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio, ReadOnly: true}}},
		{Name: "shared", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSCSI}}},
		{Name: "host"},
	}
	spec.Volumes = append(spec.Volumes,
		v1.Volume{Name: "shared", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}},
		v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostDisk: &v1.HostDisk{
			Path: "/var/lib/disks/host.img", Type: v1.HostDiskExistsOrCreate, Capacity: mustQuantity("1Gi")}}})
	spec.Networks = []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}}
	spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "default", BootOrder: &one, Model: "igb",
		InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}}

	if _, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, "schema", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	g := got.Spec
	switch {
	case g.PriorityClassName != "vm-high" || !g.Domain.CPU.DedicatedCPUPlacement || !g.Domain.CPU.IsolateEmulatorThread:
		t.Errorf("priority class or CPU pinning lost: %q %+v", g.PriorityClassName, g.Domain.CPU)
	case g.Domain.Features.Hyperv.Spinlocks == nil || *g.Domain.Features.Hyperv.Spinlocks.Retries != 8191 ||
		g.Domain.Features.Hyperv.SyNICTimer.Direct == nil || !g.Domain.Features.APIC.EndOfInterrupt:
		t.Errorf("features lost: %+v", g.Domain.Features)
	case g.Domain.Clock == nil || *g.Domain.Clock.Timezone != tz || g.Domain.Clock.Timer.RTC.Track != v1.TrackGuest:
		t.Errorf("clock lost: %+v", g.Domain.Clock)
	case g.Domain.Devices.TPM == nil || !g.Domain.Devices.Disks[0].Disk.ReadOnly:
		t.Errorf("tpm or disks lost: %+v %+v", g.Domain.Devices.TPM, g.Domain.Devices.Disks)
	case g.Volumes[2].HostDisk == nil || g.Volumes[2].HostDisk.Capacity.String() != "1Gi":
		t.Errorf("host disk lost: %+v", g.Volumes[2])
	case g.Domain.Devices.Interfaces[0].BootOrder == nil || *g.Domain.Devices.Interfaces[0].BootOrder != 1:
		t.Errorf("interface boot order lost: %+v", g.Domain.Devices.Interfaces[0])
	}
}
