package virt

import (
	"context"
	"fmt"
	"strings"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
)

// EventKind is Vireo's small vocabulary of domain lifecycle events.
type EventKind int

// Lifecycle event kinds. libvirt's defined/undefined events are not reported: the
// launcher's domains are transient.
const (
	// EventStarted: QEMU runs the domain (booted, or arrived by migration or restore).
	EventStarted EventKind = iota + 1
	// EventSuspended: the vCPUs stopped (pause, migration, I/O error, ...).
	EventSuspended
	// EventResumed: the vCPUs run again.
	EventResumed
	// EventShutdown: QEMU reported a shutdown (guest power-off or a host request);
	// EventStopped follows when the domain is gone.
	EventShutdown
	// EventStopped: the domain no longer runs; Reason says why.
	EventStopped
	// EventCrashed: the guest panicked (pvpanic).
	EventCrashed
	// EventPMSuspended: the guest suspended itself through power management.
	EventPMSuspended
	// EventAgentConnected: the guest agent opened its channel (libvirt's agent lifecycle
	// event), also reported when a domain arrives by migration with its agent connected.
	EventAgentConnected
	// EventAgentDisconnected: the guest agent closed its channel.
	EventAgentDisconnected
)

var eventKindNames = map[EventKind]string{
	EventStarted: "Started", EventSuspended: "Suspended", EventResumed: "Resumed",
	EventShutdown: "Shutdown", EventStopped: "Stopped", EventCrashed: "Crashed",
	EventPMSuspended: "PMSuspended", EventAgentConnected: "AgentConnected", EventAgentDisconnected: "AgentDisconnected",
}

func (k EventKind) String() string {
	if n, ok := eventKindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one lifecycle event of a domain.
type Event struct {
	// Domain is the domain's name.
	Domain string
	// UUID is the domain's UUID.
	UUID string
	// Kind is what happened.
	Kind EventKind
	// Reason is libvirt's detail, e.g. ReasonDestroyed or ReasonFailed for EventStopped.
	Reason Reason
	// Message says what happened in a sentence for people, with QEMU's last log lines when
	// QEMU ended on its own.
	Message string
	// Time is when the launcher received the event.
	Time time.Time
}

func (e Event) String() string {
	return fmt.Sprintf("%s %s (%s): %s", e.Domain, e.Kind, e.Reason, e.Message)
}

type detail struct {
	reason  Reason
	message string
}

// lifecycleEvents maps libvirt's event types and, in order, their detail codes
// (virDomainEvent*DetailType).
var lifecycleEvents = map[libvirt.DomainEventType]struct {
	kind    EventKind
	details []detail
}{
	libvirt.DomainEventStarted: {EventStarted, []detail{
		{ReasonBooted, "domain booted"}, {ReasonMigrated, "domain arrived by migration"},
		{ReasonRestored, "domain restored from a saved state"}, {ReasonFromSnapshot, "domain started from a snapshot"},
		{ReasonWakeup, "domain woke up from a guest suspend"}, {ReasonRecreated, "domain recreated"}}},
	libvirt.DomainEventSuspended: {EventSuspended, []detail{
		{ReasonUser, "paused on request"}, {ReasonMigrated, "paused for migration"},
		{ReasonIOError, "paused after a disk I/O error"}, {ReasonWatchdog, "paused by the watchdog"},
		{ReasonRestored, "paused after a restore"}, {ReasonFromSnapshot, "paused after a snapshot revert"},
		{ReasonAPIError, "paused after a failed libvirt operation"},
		{ReasonPostcopy, "paused for post-copy migration"}, {ReasonPostcopyFailed, "paused: post-copy migration failed"}}},
	libvirt.DomainEventResumed: {EventResumed, []detail{
		{ReasonUnpaused, "resumed on request"}, {ReasonMigrated, "resumed after migration"},
		{ReasonFromSnapshot, "resumed after a snapshot revert"}, {ReasonPostcopy, "resumed during post-copy migration"},
		{ReasonPostcopyFailed, "running after a failed post-copy migration"}}},
	libvirt.DomainEventStopped: {EventStopped, []detail{
		{ReasonShutdown, "guest powered off"}, {ReasonDestroyed, "destroyed on request"},
		{ReasonCrashed, "guest crashed"}, {ReasonMigrated, "migrated away"},
		{ReasonSaved, "saved to a file"}, {ReasonFailed, "QEMU exited unexpectedly without shutting down (it crashed or was killed)"},
		{ReasonFromSnapshot, "stopped by a snapshot revert"}, {ReasonRecreated, "stopped to be recreated"}}},
	libvirt.DomainEventShutdown: {EventShutdown, []detail{
		{ReasonFinished, "guest finished shutting down"}, {ReasonGuest, "guest powered off"},
		{ReasonHost, "QEMU was told to quit by the host (e.g. a signal)"}}},
	libvirt.DomainEventPmsuspended: {EventPMSuspended, []detail{
		{ReasonMemory, "guest suspended to memory"}, {ReasonDisk, "guest suspended to disk"}}},
	libvirt.DomainEventCrashed: {EventCrashed, []detail{
		{ReasonPanicked, "guest kernel panicked"}, {ReasonCrashLoaded, "guest panicked and loaded a crash kernel"}}},
}

// translator turns libvirt lifecycle messages into Events, remembering per domain what it
// needs to word a later event.
type translator struct {
	layout Layout
	// hostShutdown records domains whose QEMU last reported a shutdown requested by the
	// host, so their following "stopped (shutdown)" is not worded as a guest power-off.
	hostShutdown map[string]bool
}

// translate maps one message; ok is false for events Vireo does not report.
func (t *translator) translate(m libvirt.DomainEventLifecycleMsg, now time.Time) (Event, bool) {
	ev, ok := lifecycleEvents[libvirt.DomainEventType(m.Event)]
	if !ok {
		return Event{}, false
	}
	d := detail{ReasonUnknown, strings.ToLower(ev.kind.String()) + " (detail " + fmt.Sprint(m.Detail) + ")"}
	if m.Detail >= 0 && int(m.Detail) < len(ev.details) {
		d = ev.details[m.Detail]
	}
	out := Event{Domain: m.Dom.Name, UUID: toDomain(m.Dom).UUID, Kind: ev.kind, Reason: d.reason, Message: d.message, Time: now}
	switch {
	case ev.kind == EventShutdown:
		t.hostShutdown[m.Dom.Name] = d.reason == ReasonHost
	case ev.kind == EventStopped && d.reason == ReasonShutdown && t.hostShutdown[m.Dom.Name]:
		out.Message = "QEMU quit at the host's request (e.g. a signal), not a guest power-off" + t.logSuffix(m.Dom.Name)
	case ev.kind == EventStopped && (d.reason == ReasonFailed || d.reason == ReasonCrashed):
		out.Message += t.logSuffix(m.Dom.Name)
	}
	if ev.kind == EventStopped || ev.kind == EventStarted {
		delete(t.hostShutdown, m.Dom.Name)
	}
	return out, true
}

// logSuffix quotes the domain's last QEMU log lines for a message.
func (t *translator) logSuffix(name string) string {
	if checkDomainName(name) != nil {
		return ""
	}
	lines := readQEMULogTail(t.layout.QEMULogFile(name), 3)
	if len(lines) == 0 {
		return "; QEMU wrote nothing to its log, so it was most likely killed with SIGKILL (e.g. by the out-of-memory killer) or crashed without a message"
	}
	return "; QEMU's last log lines: " + strings.Join(lines, " | ")
}

// agentEvent maps one of libvirt's agent lifecycle messages; ok is false for other messages.
func agentEvent(m any, now time.Time) (Event, bool) {
	msg, ok := m.(*libvirt.DomainEventCallbackAgentLifecycleMsg)
	if !ok {
		return Event{}, false
	}
	ev := Event{Domain: msg.Dom.Name, UUID: toDomain(msg.Dom).UUID, Kind: EventAgentDisconnected, Message: "the guest agent disconnected", Time: now}
	if libvirt.ConnectDomainEventAgentLifecycleState(msg.State) == libvirt.ConnectDomainEventAgentLifecycleStateConnected {
		ev.Kind, ev.Message = EventAgentConnected, "the guest agent connected"
	}
	return ev, true
}

// Events subscribes to libvirt's lifecycle and guest agent lifecycle events of all domains
// (libvirt pushes them; no polling). The channel closes when ctx ends or the connection is
// lost. Subscribe before Start to see a domain's Started event.
func (c *Conn) Events(ctx context.Context) (<-chan Event, error) {
	var raw <-chan libvirt.DomainEventLifecycleMsg
	var agent <-chan any
	err := c.call(ctx, "subscribe to events of", "all domains", func() error {
		var err error
		if raw, err = c.l.LifecycleEvents(ctx); err != nil {
			return err
		}
		agent, err = c.l.SubscribeEvents(ctx, libvirt.DomainEventIDAgentLifecycle, libvirt.OptDomain{})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(chan Event, 16)
	go func() {
		defer close(out)
		// go-libvirt's forwarding goroutines block until their channels are read: keep reading
		// until they close, which they do when ctx ends or the connection is lost.
		defer func() {
			go func() {
				for range raw {
				}
			}()
			if agent != nil {
				go func() {
					for range agent {
					}
				}()
			}
		}()
		t := &translator{layout: c.d.layout, hostShutdown: map[string]bool{}}
		for {
			var ev Event
			ok := false
			select {
			case m, open := <-raw:
				if !open {
					return
				}
				ev, ok = t.translate(m, time.Now())
			case m, open := <-agent:
				if !open {
					agent = nil
					continue
				}
				ev, ok = agentEvent(m, time.Now())
			case <-ctx.Done():
				return
			}
			if !ok {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
