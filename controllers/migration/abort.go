package migration

import v1 "github.com/vireo-dev/vireo/apis/core/v1"

// AbortedBeforeStart is the failure reason of a migration deleted before the source node agent
// started transferring the guest.
const AbortedBeforeStart = "Migration aborted before it started"

// Deleting a migration aborts it. Before the source node agent starts the transfer, the
// controller aborts it alone: abortBeforeStart. Once it runs, only the source node agent can
// abort the libvirt job: requestAbort asks it to, and the migration ends as the node agent
// reports (failed with abortStatus Succeeded, or completed with abortStatus Failed when it was
// too late). The finalizer is released once the migration has ended.

// abortBeforeStart fails a deleted migration that has not started: the VMI's migration state
// records a successful abort, the target Pod goes.
func (d *decision) abortBeforeStart(in input) {
	s := d.state(in)
	s.AbortRequested = true
	s.AbortStatus = v1.MigrationAbortSucceeded
	d.failBeforeStart(in, AbortedBeforeStart)
}

// requestAbort asks the source node agent, through the VMI's migration state, to abort a
// running migration; it is asked once, and the node agent's abortStatus is left alone.
func (d *decision) requestAbort(in input) {
	s := d.state(in)
	if s.AbortRequested {
		return
	}
	s.AbortRequested = true
	s.AbortStatus = v1.MigrationAbortInProgress
}
