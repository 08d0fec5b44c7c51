package v1

// Clock sets the guest's real-time clock and the timers it is given. Stored and validated;
// Vireo's launcher does not apply it yet.
type Clock struct {
	// ClockOffset is what the guest's clock starts at: UTC (with an optional offset) or a time zone.
	ClockOffset `json:",inline" protobuf:"bytes,1,opt,name=clockOffset"`
	// Timer lists the timers attached to the guest and how they behave.
	// +optional
	Timer *Timer `json:"timer,omitempty" protobuf:"bytes,2,opt,name=timer"`
}

// ClockOffset is what the guest's clock is set to at boot. At most one of its fields may be set.
type ClockOffset struct {
	// UTC sets the guest clock to UTC, plus an optional offset.
	// +optional
	UTC *ClockOffsetUTC `json:"utc,omitempty" protobuf:"bytes,1,opt,name=utc"`
	// Timezone sets the guest clock to the local time of a time zone, named as in the TZ
	// environment variable (such as "Europe/Berlin"); guests that expect local time need it.
	// +optional
	Timezone *ClockOffsetTimezone `json:"timezone,omitempty" protobuf:"bytes,2,opt,name=timezone,casttype=ClockOffsetTimezone"`
}

// ClockOffsetUTC sets the guest clock to UTC on each boot.
type ClockOffsetUTC struct {
	// OffsetSeconds is added to UTC. When set, changes the guest makes to its clock are kept
	// across reboots.
	// +optional
	OffsetSeconds *int64 `json:"offsetSeconds,omitempty" protobuf:"varint,1,opt,name=offsetSeconds"`
}

// ClockOffsetTimezone names the time zone the guest clock is set to, such as "America/New_York".
type ClockOffsetTimezone string

// Timer lists the timers attached to the guest. A timer left out keeps the machine type's setting.
type Timer struct {
	// HPET is the High Precision Event Timer.
	// +optional
	HPET *HPETTimer `json:"hpet,omitempty" protobuf:"bytes,1,opt,name=hpet"`
	// KVM is the paravirtual KVM clock, for Linux guests.
	// +optional
	KVM *KVMTimer `json:"kvm,omitempty" protobuf:"bytes,2,opt,name=kvm"`
	// PIT is the Programmable Interval Timer.
	// +optional
	PIT *PITTimer `json:"pit,omitempty" protobuf:"bytes,3,opt,name=pit"`
	// RTC is the Real Time Clock.
	// +optional
	RTC *RTCTimer `json:"rtc,omitempty" protobuf:"bytes,4,opt,name=rtc"`
	// Hyperv is the paravirtual Hyper-V clock, for Windows guests.
	// +optional
	Hyperv *HypervTimer `json:"hyperv,omitempty" protobuf:"bytes,5,opt,name=hyperv"`
}

// HPETTickPolicy is what QEMU does when it misses the deadline of an HPET tick.
type HPETTickPolicy string

// PITTickPolicy is what QEMU does when it misses the deadline of a PIT tick.
type PITTickPolicy string

// RTCTickPolicy is what QEMU does when it misses the deadline of an RTC tick.
type RTCTickPolicy string

// RTCTimerTrack is the time source the RTC follows.
type RTCTimerTrack string

const (
	// HPETTickPolicyDelay delivers ticks at a constant rate; the guest's time falls behind.
	HPETTickPolicyDelay HPETTickPolicy = "delay"
	// HPETTickPolicyCatchup delivers missed ticks faster until the guest has caught up.
	HPETTickPolicyCatchup HPETTickPolicy = "catchup"
	// HPETTickPolicyMerge merges missed ticks into one.
	HPETTickPolicyMerge HPETTickPolicy = "merge"
	// HPETTickPolicyDiscard drops missed ticks.
	HPETTickPolicyDiscard HPETTickPolicy = "discard"

	// PITTickPolicyDelay delivers ticks at a constant rate; the guest's time falls behind.
	PITTickPolicyDelay PITTickPolicy = "delay"
	// PITTickPolicyCatchup delivers missed ticks faster until the guest has caught up.
	PITTickPolicyCatchup PITTickPolicy = "catchup"
	// PITTickPolicyDiscard drops missed ticks.
	PITTickPolicyDiscard PITTickPolicy = "discard"

	// RTCTickPolicyDelay delivers ticks at a constant rate; the guest's time falls behind.
	RTCTickPolicyDelay RTCTickPolicy = "delay"
	// RTCTickPolicyCatchup delivers missed ticks faster until the guest has caught up.
	RTCTickPolicyCatchup RTCTickPolicy = "catchup"

	// TrackGuest makes the RTC follow the guest's own time.
	TrackGuest RTCTimerTrack = "guest"
	// TrackWall makes the RTC follow the host's wall-clock time.
	TrackWall RTCTimerTrack = "wall"
)

// HPETTimer configures the High Precision Event Timer.
type HPETTimer struct {
	// TickPolicy is delay, catchup, merge or discard.
	// +optional
	TickPolicy HPETTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=HPETTickPolicy"`
	// Enabled set to false removes the timer even where the machine type would add it. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
}

// PITTimer configures the Programmable Interval Timer.
type PITTimer struct {
	// TickPolicy is delay, catchup or discard.
	// +optional
	TickPolicy PITTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=PITTickPolicy"`
	// Enabled set to false removes the timer even where the machine type would add it. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
}

// RTCTimer configures the Real Time Clock.
type RTCTimer struct {
	// TickPolicy is delay or catchup.
	// +optional
	TickPolicy RTCTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=RTCTickPolicy"`
	// Enabled set to false removes the timer even where the machine type would add it. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
	// Track is the time the RTC follows: guest or wall.
	// +optional
	Track RTCTimerTrack `json:"track,omitempty" protobuf:"bytes,3,opt,name=track,casttype=RTCTimerTrack"`
}

// KVMTimer configures the paravirtual KVM clock.
type KVMTimer struct {
	// Enabled set to false removes the timer even where the machine type would add it. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,1,opt,name=present"`
}

// HypervTimer configures the paravirtual Hyper-V clock.
type HypervTimer struct {
	// Enabled set to false removes the timer even where the machine type would add it. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,1,opt,name=present"`
}
