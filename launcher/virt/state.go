package virt

import (
	"encoding/xml"

	libvirt "github.com/digitalocean/go-libvirt"
)

// State is a domain's state as libvirt reports it.
type State int

// Domain states (virDomainState).
const (
	StateNoState State = iota
	StateRunning
	StateBlocked
	StatePaused
	StateShuttingDown
	StateShutoff
	StateCrashed
	StatePMSuspended
)

var stateNames = map[State]string{
	StateNoState: "no state", StateRunning: "running", StateBlocked: "blocked", StatePaused: "paused",
	StateShuttingDown: "shutting down", StateShutoff: "shut off", StateCrashed: "crashed",
	StatePMSuspended: "suspended by guest power management",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "unknown state"
}

// Reason is libvirt's detail for a state or an event, as a short stable token that the
// node agent can switch on (Event.Message carries the sentence for humans).
type Reason string

// Reasons libvirt gives for states and lifecycle events.
const (
	ReasonUnknown           Reason = "unknown"
	ReasonBooted            Reason = "booted"
	ReasonMigrated          Reason = "migrated"
	ReasonRestored          Reason = "restored"
	ReasonFromSnapshot      Reason = "from snapshot"
	ReasonUnpaused          Reason = "unpaused"
	ReasonMigrationCanceled Reason = "migration canceled"
	ReasonSaveCanceled      Reason = "save canceled"
	ReasonWakeup            Reason = "wakeup"
	ReasonRecreated         Reason = "recreated"
	ReasonPostcopy          Reason = "postcopy"
	ReasonPostcopyFailed    Reason = "postcopy failed"
	ReasonUser              Reason = "user"
	ReasonSaved             Reason = "saved"
	ReasonDump              Reason = "dump"
	ReasonIOError           Reason = "io error"
	ReasonWatchdog          Reason = "watchdog"
	ReasonShuttingDown      Reason = "shutting down"
	ReasonSnapshot          Reason = "snapshot"
	ReasonStartingUp        Reason = "starting up"
	ReasonAPIError          Reason = "api error"
	ReasonShutdown          Reason = "shutdown"
	ReasonDestroyed         Reason = "destroyed"
	ReasonCrashed           Reason = "crashed"
	ReasonFailed            Reason = "failed"
	ReasonDaemon            Reason = "daemon"
	ReasonPanicked          Reason = "panicked"
	ReasonCrashLoaded       Reason = "crash loaded"
	ReasonFinished          Reason = "finished"
	ReasonGuest             Reason = "guest"
	ReasonHost              Reason = "host"
	ReasonMemory            Reason = "memory"
	ReasonDisk              Reason = "disk"
)

// stateReasons lists, per state, libvirt's reason codes in order (virDomain*Reason).
var stateReasons = map[State][]Reason{
	StateNoState: {ReasonUnknown},
	StateRunning: {ReasonUnknown, ReasonBooted, ReasonMigrated, ReasonRestored, ReasonFromSnapshot,
		ReasonUnpaused, ReasonMigrationCanceled, ReasonSaveCanceled, ReasonWakeup, ReasonCrashed,
		ReasonPostcopy, ReasonPostcopyFailed},
	StateBlocked: {ReasonUnknown},
	StatePaused: {ReasonUnknown, ReasonUser, ReasonMigrated, ReasonSaved, ReasonDump, ReasonIOError,
		ReasonWatchdog, ReasonFromSnapshot, ReasonShuttingDown, ReasonSnapshot, ReasonCrashed,
		ReasonStartingUp, ReasonPostcopy, ReasonPostcopyFailed, ReasonAPIError},
	StateShuttingDown: {ReasonUnknown, ReasonUser},
	StateShutoff: {ReasonUnknown, ReasonShutdown, ReasonDestroyed, ReasonCrashed, ReasonMigrated,
		ReasonSaved, ReasonFailed, ReasonFromSnapshot, ReasonDaemon},
	StateCrashed:     {ReasonUnknown, ReasonPanicked},
	StatePMSuspended: {ReasonUnknown},
}

// stateOf maps libvirt's state and reason codes; unknown codes map to the unknown values
// rather than failing, so a newer libvirt cannot break the launcher.
func stateOf(state, reason int32) (State, Reason) {
	s := State(state)
	if _, ok := stateNames[s]; !ok {
		return StateNoState, ReasonUnknown
	}
	reasons := stateReasons[s]
	if reason < 0 || int(reason) >= len(reasons) {
		return s, ReasonUnknown
	}
	return s, reasons[reason]
}

// Compile-time check that the state numbering above is libvirt's.
var _ = [1]struct{}{}[int(libvirt.DomainPmsuspended)-int(StatePMSuspended)]

// nameOf returns the <name> of domain XML for messages, or "(unnamed)".
func nameOf(domainXML string) string {
	var d struct {
		Name string `xml:"name"`
	}
	if err := xml.Unmarshal([]byte(domainXML), &d); err != nil || d.Name == "" {
		return "(unnamed)"
	}
	return d.Name
}
