package virt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
)

func lifecycleMsg(name string, ev libvirt.DomainEventType, detail int32) libvirt.DomainEventLifecycleMsg {
	return libvirt.DomainEventLifecycleMsg{Dom: libvirt.Domain{Name: name, UUID: libvirt.UUID{0x12, 0x34}}, Event: int32(ev), Detail: detail}
}

func TestTranslateLifecycleEvents(t *testing.T) {
	cases := []struct {
		ev      libvirt.DomainEventType
		detail  int32
		kind    EventKind
		reason  Reason
		message string
	}{
		{libvirt.DomainEventStarted, int32(libvirt.DomainEventStartedBooted), EventStarted, ReasonBooted, "domain booted"},
		{libvirt.DomainEventStarted, int32(libvirt.DomainEventStartedMigrated), EventStarted, ReasonMigrated, "migration"},
		{libvirt.DomainEventSuspended, int32(libvirt.DomainEventSuspendedPaused), EventSuspended, ReasonUser, "paused on request"},
		{libvirt.DomainEventSuspended, int32(libvirt.DomainEventSuspendedIoerror), EventSuspended, ReasonIOError, "I/O error"},
		{libvirt.DomainEventSuspended, int32(libvirt.DomainEventSuspendedPostcopyFailed), EventSuspended, ReasonPostcopyFailed, "post-copy"},
		{libvirt.DomainEventResumed, int32(libvirt.DomainEventResumedUnpaused), EventResumed, ReasonUnpaused, "resumed"},
		{libvirt.DomainEventResumed, int32(libvirt.DomainEventResumedPostcopyFailed), EventResumed, ReasonPostcopyFailed, "post-copy"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedShutdown), EventStopped, ReasonShutdown, "guest powered off"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedDestroyed), EventStopped, ReasonDestroyed, "destroyed"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedCrashed), EventStopped, ReasonCrashed, "guest crashed"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedMigrated), EventStopped, ReasonMigrated, "migrated"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedFailed), EventStopped, ReasonFailed, "QEMU exited unexpectedly"},
		{libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedRecreated), EventStopped, ReasonRecreated, "recreated"},
		{libvirt.DomainEventShutdown, int32(libvirt.DomainEventShutdownGuest), EventShutdown, ReasonGuest, "guest powered off"},
		{libvirt.DomainEventPmsuspended, int32(libvirt.DomainEventPmsuspendedDisk), EventPMSuspended, ReasonDisk, "disk"},
		{libvirt.DomainEventCrashed, int32(libvirt.DomainEventCrashedPanicked), EventCrashed, ReasonPanicked, "panicked"},
		{libvirt.DomainEventStopped, 99, EventStopped, ReasonUnknown, "detail 99"},
		{libvirt.DomainEventStarted, -1, EventStarted, ReasonUnknown, "detail -1"},
	}
	tr := &translator{layout: NewLayout(t.TempDir()), hostShutdown: map[string]bool{}}
	now := time.Unix(1, 0)
	for _, tc := range cases {
		ev, ok := tr.translate(lifecycleMsg("vm", tc.ev, tc.detail), now)
		if !ok || ev.Kind != tc.kind || ev.Reason != tc.reason || !strings.Contains(ev.Message, tc.message) {
			t.Errorf("event %d detail %d -> %+v, %v; want %s (%s) with %q", tc.ev, tc.detail, ev, ok, tc.kind, tc.reason, tc.message)
		}
		if ev.Domain != "vm" || ev.UUID != "12340000-0000-0000-0000-000000000000" || !ev.Time.Equal(now) {
			t.Errorf("event identity %+v", ev)
		}
	}
	for _, ignored := range []libvirt.DomainEventType{libvirt.DomainEventDefined, libvirt.DomainEventUndefined, 42} {
		if ev, ok := tr.translate(lifecycleMsg("vm", ignored, 0), now); ok {
			t.Errorf("event type %d reported as %v", ignored, ev)
		}
	}
}

func TestTranslateHostShutdownIsNotAGuestPowerOff(t *testing.T) {
	tr := &translator{layout: NewLayout(t.TempDir()), hostShutdown: map[string]bool{}}
	tr.translate(lifecycleMsg("vm", libvirt.DomainEventShutdown, int32(libvirt.DomainEventShutdownHost)), time.Now())
	ev, _ := tr.translate(lifecycleMsg("vm", libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedShutdown)), time.Now())
	if ev.Reason != ReasonShutdown || strings.Contains(ev.Message, "guest powered off") || !strings.Contains(ev.Message, "host") {
		t.Errorf("stop after a host shutdown: %v", ev)
	}
	// The next run of the domain starts clean.
	tr.translate(lifecycleMsg("vm", libvirt.DomainEventStarted, 0), time.Now())
	tr.translate(lifecycleMsg("vm", libvirt.DomainEventShutdown, int32(libvirt.DomainEventShutdownGuest)), time.Now())
	ev, _ = tr.translate(lifecycleMsg("vm", libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedShutdown)), time.Now())
	if ev.Message != "guest powered off" {
		t.Errorf("stop after a guest power-off: %v", ev)
	}
}

func TestTranslateFailedQuotesQEMULog(t *testing.T) {
	l := NewLayout(t.TempDir())
	if err := os.MkdirAll(l.QEMULogDir, 0o700); err != nil {
		t.Fatal(err)
	}
	tr := &translator{layout: l, hostShutdown: map[string]bool{}}
	failed := lifecycleMsg("vm", libvirt.DomainEventStopped, int32(libvirt.DomainEventStoppedFailed))
	ev, _ := tr.translate(failed, time.Now())
	if !strings.Contains(ev.Message, "SIGKILL") {
		t.Errorf("without a log: %q, want a hint at SIGKILL", ev.Message)
	}
	log := sampleQEMULog + "2026-11-30T20:52:40.640605Z qemu-system-x86_64: Assertion `x' failed.\n" +
		"2026-11-30 20:52:40.700+0000: shutting down, reason=crashed\n"
	if err := os.WriteFile(filepath.Join(l.QEMULogDir, "vm.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	ev, _ = tr.translate(failed, time.Now())
	if !strings.Contains(ev.Message, "Assertion `x' failed.") || strings.Contains(ev.Message, "shutting down, reason") {
		t.Errorf("with a log: %q", ev.Message)
	}
}

func TestStateOf(t *testing.T) {
	cases := []struct {
		state, reason int32
		s             State
		r             Reason
	}{
		{int32(libvirt.DomainRunning), int32(libvirt.DomainRunningBooted), StateRunning, ReasonBooted},
		{int32(libvirt.DomainRunning), int32(libvirt.DomainRunningPostcopyFailed), StateRunning, ReasonPostcopyFailed},
		{int32(libvirt.DomainPaused), int32(libvirt.DomainPausedUser), StatePaused, ReasonUser},
		{int32(libvirt.DomainPaused), int32(libvirt.DomainPausedAPIError), StatePaused, ReasonAPIError},
		{int32(libvirt.DomainShutoff), int32(libvirt.DomainShutoffCrashed), StateShutoff, ReasonCrashed},
		{int32(libvirt.DomainShutoff), int32(libvirt.DomainShutoffDaemon), StateShutoff, ReasonDaemon},
		{int32(libvirt.DomainCrashed), int32(libvirt.DomainCrashedPanicked), StateCrashed, ReasonPanicked},
		{int32(libvirt.DomainShutoff), 77, StateShutoff, ReasonUnknown},
		{42, 0, StateNoState, ReasonUnknown},
		{-1, -1, StateNoState, ReasonUnknown},
	}
	for _, tc := range cases {
		if s, r := stateOf(tc.state, tc.reason); s != tc.s || r != tc.r {
			t.Errorf("stateOf(%d, %d) = %v, %v; want %v, %v", tc.state, tc.reason, s, r, tc.s, tc.r)
		}
	}
	if StatePaused.String() != "paused" || State(99).String() != "unknown state" || EventKind(99).String() != "EventKind(99)" {
		t.Error("String methods")
	}
}

func TestNameOf(t *testing.T) {
	if n := nameOf("<domain type='qemu'><name>vm1</name></domain>"); n != "vm1" {
		t.Errorf("nameOf = %q", n)
	}
	for _, bad := range []string{"", "<domain>", "not xml", "<domain><name></name></domain>"} {
		if n := nameOf(bad); n != "(unnamed)" {
			t.Errorf("nameOf(%q) = %q", bad, n)
		}
	}
}

// TestAgentEvents: libvirt's agent lifecycle messages become AgentConnected and
// AgentDisconnected events of their domain; other messages are not agent events.
func TestAgentEvents(t *testing.T) {
	dom := libvirt.Domain{Name: "ns_vm", UUID: libvirt.UUID{0x12, 0x34}}
	for state, want := range map[libvirt.ConnectDomainEventAgentLifecycleState]EventKind{
		libvirt.ConnectDomainEventAgentLifecycleStateConnected:    EventAgentConnected,
		libvirt.ConnectDomainEventAgentLifecycleStateDisconnected: EventAgentDisconnected,
	} {
		ev, ok := agentEvent(&libvirt.DomainEventCallbackAgentLifecycleMsg{Dom: dom, State: int32(state),
			Reason: int32(libvirt.ConnectDomainEventAgentLifecycleReasonChannel)}, time.Now())
		if !ok || ev.Kind != want || ev.Domain != "ns_vm" {
			t.Errorf("state %d: %+v (%v), want %s of ns_vm", state, ev, ok, want)
		}
	}
	if _, ok := agentEvent(&libvirt.DomainEventCallbackTunableMsg{}, time.Now()); ok {
		t.Error("a tunable message was taken for an agent event")
	}
}
