package validation

import (
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// on and off are explicit feature states.
var (
	on  = &v1.FeatureState{Enabled: ptr.To(true)}
	off = &v1.FeatureState{Enabled: ptr.To(false)}
)

func TestSecureBootNeedsSMM(t *testing.T) {
	const secureBoot = "spec.domain.firmware.bootloader.efi.secureBoot"
	efi := func(e v1.EFI, f *v1.Features) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Firmware.Bootloader = &v1.Bootloader{EFI: &e}
			s.Domain.Features = f
		}
	}
	runSpecCases(t, []specCase{
		{name: "efi defaults to secure boot, smm missing", mutate: efi(v1.EFI{}, nil), want: []fe{{invalid, secureBoot}}},
		{name: "secure boot, smm missing", mutate: efi(v1.EFI{SecureBoot: ptr.To(true)}, &v1.Features{}), want: []fe{{invalid, secureBoot}}},
		{name: "secure boot, smm off", mutate: efi(v1.EFI{}, &v1.Features{SMM: off}), want: []fe{{invalid, secureBoot}}},
		{name: "secure boot with smm", mutate: efi(v1.EFI{}, &v1.Features{SMM: &v1.FeatureState{}})},
		{name: "secure boot with smm on", mutate: efi(v1.EFI{SecureBoot: ptr.To(true)}, &v1.Features{SMM: on})},
		{name: "no secure boot, no smm", mutate: efi(v1.EFI{SecureBoot: ptr.To(false)}, nil)},
		{name: "bios ignores smm", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Firmware.Bootloader = &v1.Bootloader{BIOS: &v1.BIOS{}}
		}},
	})
}

func TestHypervValidation(t *testing.T) {
	const hv = "spec.domain.features.hyperv"
	hyperv := func(h v1.FeatureHyperv) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Features = &v1.Features{APIC: &v1.FeatureAPIC{EndOfInterrupt: true}, Hyperv: &h}
		}
	}
	windows := v1.FeatureHyperv{
		Relaxed: on, VAPIC: on, VPIndex: on, Runtime: on, SyNIC: on, ResetFeature: on, Frequencies: on, Reenlightenment: on, IPI: on,
		Spinlocks:  &v1.FeatureSpinlocks{Retries: ptr.To(uint32(8191))},
		SyNICTimer: &v1.SyNICTimer{Direct: on},
		TLBFlush:   &v1.TLBFlush{Direct: on, Extended: on},
		VendorID:   &v1.FeatureVendorID{VendorID: "KVMKVMKVM"},
	}
	runSpecCases(t, []specCase{
		{name: "all enlightenments", mutate: hyperv(windows)},
		{name: "needed ones left out (KubeVirt turns them on)", mutate: hyperv(v1.FeatureHyperv{SyNIC: on, SyNICTimer: &v1.SyNICTimer{}, IPI: on})},
		{name: "spinlocks at the minimum", mutate: hyperv(v1.FeatureHyperv{Spinlocks: &v1.FeatureSpinlocks{Retries: ptr.To(uint32(4096))}})},
		{name: "spinlocks below the minimum", mutate: hyperv(v1.FeatureHyperv{Spinlocks: &v1.FeatureSpinlocks{Retries: ptr.To(uint32(4095))}}),
			want: []fe{{invalid, hv + ".spinlocks.spinlocks"}}},
		{name: "disabled spinlocks are not checked", mutate: hyperv(v1.FeatureHyperv{Spinlocks: &v1.FeatureSpinlocks{
			FeatureState: v1.FeatureState{Enabled: ptr.To(false)}, Retries: ptr.To(uint32(1))}})},
		{name: "vendor id too long", mutate: hyperv(v1.FeatureHyperv{VendorID: &v1.FeatureVendorID{VendorID: "ThirteenChars"}}),
			want: []fe{{tooLong, hv + ".vendorid.vendorid"}}},
		{name: "synic without vpindex", mutate: hyperv(v1.FeatureHyperv{SyNIC: on, VPIndex: off}), want: []fe{{invalid, hv + ".synic"}}},
		{name: "synictimer without synic", mutate: hyperv(v1.FeatureHyperv{SyNICTimer: &v1.SyNICTimer{}, SyNIC: off}),
			want: []fe{{invalid, hv + ".synictimer"}}},
		{name: "tlbflush without vpindex", mutate: hyperv(v1.FeatureHyperv{TLBFlush: &v1.TLBFlush{}, VPIndex: off}),
			want: []fe{{invalid, hv + ".tlbflush"}}},
		{name: "ipi without vpindex", mutate: hyperv(v1.FeatureHyperv{IPI: &v1.FeatureState{}, VPIndex: off}),
			want: []fe{{invalid, hv + ".ipi"}}},
		{name: "disabled feature needs nothing", mutate: hyperv(v1.FeatureHyperv{IPI: off, VPIndex: off})},
	})
}

func TestClockValidation(t *testing.T) {
	const clock = "spec.domain.clock"
	setClock := func(c v1.Clock) func(s *v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Clock = &c }
	}
	tz := func(z string) *v1.ClockOffsetTimezone { v := v1.ClockOffsetTimezone(z); return &v }
	runSpecCases(t, []specCase{
		{name: "utc", mutate: setClock(v1.Clock{ClockOffset: v1.ClockOffset{UTC: &v1.ClockOffsetUTC{}}})},
		{name: "utc with offset", mutate: setClock(v1.Clock{ClockOffset: v1.ClockOffset{UTC: &v1.ClockOffsetUTC{OffsetSeconds: ptr.To(int64(-3600))}}})},
		{name: "timezone", mutate: setClock(v1.Clock{ClockOffset: v1.ClockOffset{Timezone: tz("Europe/Berlin")}})},
		{name: "timers only", mutate: setClock(v1.Clock{Timer: &v1.Timer{
			HPET: &v1.HPETTimer{Enabled: ptr.To(false)}, KVM: &v1.KVMTimer{}, Hyperv: &v1.HypervTimer{},
			PIT: &v1.PITTimer{TickPolicy: v1.PITTickPolicyDelay}, RTC: &v1.RTCTimer{TickPolicy: v1.RTCTickPolicyCatchup, Track: v1.TrackGuest},
		}})},
		{name: "utc and timezone", mutate: setClock(v1.Clock{ClockOffset: v1.ClockOffset{UTC: &v1.ClockOffsetUTC{}, Timezone: tz("UTC")}}),
			want: []fe{{invalid, clock}}},
		{name: "empty timezone", mutate: setClock(v1.Clock{ClockOffset: v1.ClockOffset{Timezone: tz("")}}),
			want: []fe{{required, clock + ".timezone"}}},
		{name: "bad tick policies", mutate: setClock(v1.Clock{Timer: &v1.Timer{
			HPET: &v1.HPETTimer{TickPolicy: "skip"}, PIT: &v1.PITTimer{TickPolicy: "merge"}, RTC: &v1.RTCTimer{TickPolicy: "discard", Track: "host"},
		}}), want: []fe{
			{notSupported, clock + ".timer.hpet.tickPolicy"}, {notSupported, clock + ".timer.pit.tickPolicy"},
			{notSupported, clock + ".timer.rtc.tickPolicy"}, {notSupported, clock + ".timer.rtc.track"},
		}},
	})
}

func TestTPMAndPriorityClass(t *testing.T) {
	runSpecCases(t, []specCase{
		{name: "persistent tpm", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.TPM = &v1.TPMDevice{Persistent: ptr.To(true)}
		}},
		{name: "priority class", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.PriorityClassName = "system-node-critical" }},
		{name: "bad priority class", mutate: func(s *v1.VirtualMachineInstanceSpec) { s.PriorityClassName = "High_Priority" },
			want: []fe{{invalid, "spec.priorityClassName"}}},
	})
}
