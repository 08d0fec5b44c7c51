package launcher

import (
	"errors"
	"sync"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// hub holds the domain's status and tells subscribers (the node agent's event streams) of each
// change. It remembers whether a final status reached a subscriber, so the launcher exits only
// once the node agent knows how its guest ended (or a timeout passed).
type hub struct {
	mu        sync.Mutex
	st        protocol.DomainStatus
	subs      map[chan struct{}]struct{}
	delivered chan struct{} // closed once a final status was sent to a subscriber
	final     chan struct{} // closed once the status is final
}

func newHub() *hub {
	return &hub{st: protocol.DomainStatus{Since: time.Now()}, subs: map[chan struct{}]struct{}{},
		delivered: make(chan struct{}), final: make(chan struct{})}
}

// update changes the status with f; a final status is never changed again.
func (h *hub) update(f func(st *protocol.DomainStatus)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.st.Phase.Ended() {
		return
	}
	before := h.st.Phase
	f(&h.st)
	if h.st.Phase != before {
		h.st.Since = time.Now()
	}
	if h.st.Phase.Ended() {
		close(h.final)
	}
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *hub) get() protocol.DomainStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	st.Interfaces = append([]protocol.Interface(nil), h.st.Interfaces...)
	if h.st.Migration != nil {
		m := *h.st.Migration
		st.Migration = &m
	}
	if h.st.GuestOS != nil {
		g := *h.st.GuestOS
		st.GuestOS = &g
	}
	return st
}

// subscribe returns a channel signalled on every change, and its cancel function.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// subscribed reports whether an event stream is open.
func (h *hub) subscribed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs) > 0
}

// sent records that st reached a subscriber.
func (h *hub) sent(st protocol.DomainStatus) {
	if !st.Phase.Ended() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.delivered:
	default:
		close(h.delivered)
	}
}

func (h *hub) end(phase protocol.DomainPhase, reason, message string) {
	h.update(func(st *protocol.DomainStatus) {
		st.Phase, st.Reason, st.Message = phase, reason, message
	})
}

// domainEvents tracks libvirt's lifecycle events of the launcher's domain into the status.
type domainEvents struct {
	hub *hub
	// hostShutdown: QEMU announced a shutdown the host asked for (a signal), not the guest.
	hostShutdown bool
	// destroyRequested: the launcher destroyed the domain itself (grace period over, or Stop).
	destroyRequested func() bool
}

func (d *domainEvents) handle(ev virt.Event) {
	switch ev.Kind {
	case virt.EventStarted, virt.EventResumed:
		d.hub.update(func(st *protocol.DomainStatus) { st.Phase, st.Reason, st.Message = protocol.DomainRunning, "", "" })
	case virt.EventSuspended:
		reason := pauseReason(ev.Reason)
		d.hub.update(func(st *protocol.DomainStatus) {
			st.Phase, st.Reason, st.Message = protocol.DomainPaused, reason, ev.Message
		})
	case virt.EventShutdown:
		d.hostShutdown = ev.Reason == virt.ReasonHost
	case virt.EventCrashed:
		d.hub.end(protocol.DomainFailed, v1.ReasonGuestPanicked, ev.Message)
	case virt.EventStopped:
		d.hub.update(func(st *protocol.DomainStatus) { st.AgentConnected = false })
		d.stopped(ev)
	case virt.EventAgentConnected, virt.EventAgentDisconnected:
		d.hub.update(func(st *protocol.DomainStatus) {
			st.AgentConnected = ev.Kind == virt.EventAgentConnected
			if !st.AgentConnected {
				nameInterfaces(st.Interfaces, nil) // what the guest said no longer holds
			}
		})
	}
}

func (d *domainEvents) stopped(ev virt.Event) {
	switch {
	case ev.Reason == virt.ReasonMigrated:
		now := time.Now()
		d.hub.update(func(st *protocol.DomainStatus) {
			st.Phase, st.Reason, st.Message = protocol.DomainMigrated, v1.ReasonMigrated, "the guest moved to the migration's target launcher"
			if m := st.Migration; m != nil && !m.Ended() {
				m.Phase, m.End = protocol.MigrationCompleted, &now
			}
		})
	case ev.Reason == virt.ReasonShutdown && !d.hostShutdown:
		d.hub.end(protocol.DomainSucceeded, v1.ReasonGuestShutdown, "the guest powered off")
	case ev.Reason == virt.ReasonShutdown:
		d.hub.end(protocol.DomainFailed, v1.ReasonQEMUTerminated, ev.Message)
	case ev.Reason == virt.ReasonDestroyed && d.destroyRequested():
		d.hub.end(protocol.DomainSucceeded, v1.ReasonDestroyed, "the guest was destroyed after its shutdown grace period")
	case ev.Reason == virt.ReasonDestroyed:
		d.hub.end(protocol.DomainFailed, v1.ReasonDestroyed, "the domain was destroyed outside Vireo: "+ev.Message)
	default:
		d.hub.end(protocol.DomainFailed, v1.ReasonQEMUCrashed, ev.Message)
	}
}

// pauseReason is the reason a pause shows as the VMI's Paused condition: a user's pause or an
// I/O error. Pauses of Vireo's own (migration, snapshots) give "" and no condition.
func pauseReason(r virt.Reason) string {
	switch r {
	case virt.ReasonUser:
		return protocol.PausedByUser
	case virt.ReasonIOError:
		return protocol.PausedIOError
	}
	return ""
}

// reasonError is a failure that ends the domain with its own reason rather than SyncFailed.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

// failureReason is the reason a failed Sync ends the domain with.
func failureReason(err error) string {
	if re := (*reasonError)(nil); errors.As(err, &re) {
		return re.reason
	}
	return v1.ReasonSyncFailed
}
