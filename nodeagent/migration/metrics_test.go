package migration

import (
	"testing"

	"github.com/vireo-dev/vireo/launcher/protocol"
)

func TestArrivedByMigration(t *testing.T) {
	ready := &protocol.DomainStatus{Migration: &protocol.MigrationStatus{Phase: protocol.MigrationReady}}
	arrived := &protocol.DomainStatus{Phase: protocol.DomainRunning,
		Migration: &protocol.MigrationStatus{Phase: protocol.MigrationCompleted, ElapsedMs: 900, DowntimeMs: 40}}
	leftSource := &protocol.DomainStatus{Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationCompleted}}
	failed := &protocol.DomainStatus{Migration: &protocol.MigrationStatus{Phase: protocol.MigrationFailed, ElapsedMs: 900}}
	cases := []struct {
		name     string
		prev, st *protocol.DomainStatus
		want     bool
	}{
		{"the target's guest arrives", ready, arrived, true},
		{"a later report of the same arrival", arrived, arrived, false},
		{"a new session's first report (agent restarted)", nil, arrived, false},
		{"the source's guest left", &protocol.DomainStatus{}, leftSource, false},
		{"a failed migration", ready, failed, false},
		{"no migration", &protocol.DomainStatus{}, &protocol.DomainStatus{Phase: protocol.DomainRunning}, false},
	}
	for _, c := range cases {
		if got := arrivedByMigration(c.prev, c.st); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
