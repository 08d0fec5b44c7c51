package launcher

import (
	"testing"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// TestPauseReasons: a user's pause and an I/O error become the VMI's Paused reasons; a pause of
// Vireo's own (the end of a migration) keeps the phase Paused without a reason, and a resume
// clears both.
func TestPauseReasons(t *testing.T) {
	for _, tc := range []struct {
		reason virt.Reason
		want   string
	}{
		{virt.ReasonUser, protocol.PausedByUser},
		{virt.ReasonIOError, protocol.PausedIOError},
		{virt.ReasonMigrated, ""},
		{virt.ReasonPostcopy, ""},
	} {
		d := &domainEvents{hub: newHub(), destroyRequested: func() bool { return false }}
		d.handle(virt.Event{Kind: virt.EventStarted, Reason: virt.ReasonBooted})
		d.handle(virt.Event{Kind: virt.EventSuspended, Reason: tc.reason, Message: "m"})
		if st := d.hub.get(); st.Phase != protocol.DomainPaused || st.Reason != tc.want {
			t.Errorf("suspended for %q: phase %q reason %q, want Paused %q", tc.reason, st.Phase, st.Reason, tc.want)
		}
		d.handle(virt.Event{Kind: virt.EventResumed, Reason: virt.ReasonUnpaused})
		if st := d.hub.get(); st.Phase != protocol.DomainRunning || st.Reason != "" {
			t.Errorf("resumed after %q: phase %q reason %q", tc.reason, st.Phase, st.Reason)
		}
	}
}
