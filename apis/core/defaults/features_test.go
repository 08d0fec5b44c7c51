package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestFeatureDefaults(t *testing.T) {
	on, off := ptr.To(true), ptr.To(false)
	spec := v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{
		APIC: &v1.FeatureAPIC{},
		SMM:  &v1.FeatureState{Enabled: off},
		Hyperv: &v1.FeatureHyperv{
			Relaxed:    &v1.FeatureState{},
			VAPIC:      &v1.FeatureState{Enabled: off},
			Spinlocks:  &v1.FeatureSpinlocks{},
			SyNICTimer: &v1.SyNICTimer{Direct: &v1.FeatureState{}},
			TLBFlush:   &v1.TLBFlush{Extended: &v1.FeatureState{}},
			VendorID:   &v1.FeatureVendorID{VendorID: "vireo"},
		},
	}}}
	vmi := newVMI(spec)
	SetVirtualMachineInstanceDefaults(vmi)
	want := &v1.Features{
		ACPI: v1.FeatureState{Enabled: on},
		APIC: &v1.FeatureAPIC{FeatureState: v1.FeatureState{Enabled: on}},
		SMM:  &v1.FeatureState{Enabled: off},
		Hyperv: &v1.FeatureHyperv{
			Relaxed:    &v1.FeatureState{Enabled: on},
			VAPIC:      &v1.FeatureState{Enabled: off},
			Spinlocks:  &v1.FeatureSpinlocks{FeatureState: v1.FeatureState{Enabled: on}, Retries: ptr.To(uint32(4096))},
			SyNICTimer: &v1.SyNICTimer{FeatureState: v1.FeatureState{Enabled: on}, Direct: &v1.FeatureState{Enabled: on}},
			TLBFlush:   &v1.TLBFlush{Extended: &v1.FeatureState{Enabled: on}},
			VendorID:   &v1.FeatureVendorID{FeatureState: v1.FeatureState{Enabled: on}, VendorID: "vireo"},
		},
	}
	if d := cmp.Diff(want, vmi.Spec.Domain.Features); d != "" {
		t.Errorf("features (-want +got):\n%s", d)
	}

	disabled := newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{
		Hyperv: &v1.FeatureHyperv{Spinlocks: &v1.FeatureSpinlocks{FeatureState: v1.FeatureState{Enabled: off}}},
	}}})
	SetVirtualMachineInstanceDefaults(disabled)
	if r := disabled.Spec.Domain.Features.Hyperv.Spinlocks.Retries; r != nil {
		t.Errorf("disabled spinlocks got retries %d, want none", *r)
	}
}

func TestClockDefaults(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Clock: &v1.Clock{Timer: &v1.Timer{
		HPET: &v1.HPETTimer{Enabled: ptr.To(false)},
		RTC:  &v1.RTCTimer{TickPolicy: v1.RTCTickPolicyCatchup},
		KVM:  &v1.KVMTimer{},
	}}}})
	SetVirtualMachineInstanceDefaults(vmi)
	want := &v1.Timer{
		HPET: &v1.HPETTimer{Enabled: ptr.To(false)},
		RTC:  &v1.RTCTimer{TickPolicy: v1.RTCTickPolicyCatchup, Enabled: ptr.To(true)},
		KVM:  &v1.KVMTimer{Enabled: ptr.To(true)},
	}
	if d := cmp.Diff(want, vmi.Spec.Domain.Clock.Timer); d != "" {
		t.Errorf("timers (-want +got):\n%s", d)
	}
}

func TestLUNDiskIsNotTurnedIntoADisk(t *testing.T) {
	vmi := newVMI(v1.VirtualMachineInstanceSpec{})
	vmi.Spec.Domain.Devices.Disks = []v1.Disk{{Name: "a", DiskDevice: v1.DiskDevice{LUN: &v1.LunTarget{}}}}
	SetVirtualMachineInstanceDefaults(vmi)
	if d := vmi.Spec.Domain.Devices.Disks[0]; d.Disk != nil || d.LUN == nil {
		t.Errorf("lun disk became %+v, want it kept as a lun", d.DiskDevice)
	}
}
