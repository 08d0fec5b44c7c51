package migration

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestOverLimit(t *testing.T) {
	cases := []struct {
		name     string
		inFlight []flight
		node     string
		held     bool
	}{
		{"none running", nil, "node-a", false},
		{"one below both limits", []flight{{"a", "node-a"}}, "node-a", false},
		{"node limit", []flight{{"a", "node-a"}, {"b", "node-a"}}, "node-a", true},
		{"node limit of another node", []flight{{"a", "node-a"}, {"b", "node-a"}}, "node-b", false},
		{"cluster limit", []flight{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}, "node-a", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := overLimit(c.inFlight, c.node, limits); (got != "") != c.held {
				t.Errorf("overLimit = %q, want held %v", got, c.held)
			}
		})
	}
}

func inPhase(uid types.UID, phase v1.VirtualMachineInstanceMigrationPhase, node string) *v1.VirtualMachineInstanceMigration {
	m := &v1.VirtualMachineInstanceMigration{Status: v1.VirtualMachineInstanceMigrationStatus{Phase: phase}}
	m.UID = uid
	if node != "" {
		m.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{SourceNode: node}
	}
	return m
}

func TestAdmissionsCountStartsTheCacheHasNotSeen(t *testing.T) {
	var a admissions
	a.admit("started", "node-a")
	a.admit("seen", "node-a")
	a.admit("ended", "node-a")
	a.admit("gone", "node-a")
	all := []*v1.VirtualMachineInstanceMigration{
		inPhase("started", v1.MigrationPending, ""),           // let through; the cache still says Pending
		inPhase("seen", v1.MigrationScheduling, "node-a"),     // the cache caught up
		inPhase("ended", v1.MigrationFailed, "node-a"),        // failed right after its start
		inPhase("running", v1.MigrationRunning, "node-b"),     // started by an earlier leader
		inPhase("waiting", v1.MigrationPending, ""),           // not let through
		inPhase("self", v1.MigrationPending, ""),              // the migration asking
		inPhase("succeeded", v1.MigrationSucceeded, "node-a"), // over
	}
	got := map[types.UID]string{}
	for _, f := range a.inFlight(all, "self") {
		got[f.uid] = f.sourceNode
	}
	want := map[types.UID]string{"started": "node-a", "seen": "node-a", "running": "node-b"}
	if len(got) != len(want) {
		t.Fatalf("in flight %v, want %v", got, want)
	}
	for uid, node := range want {
		if got[uid] != node {
			t.Errorf("in flight %v, want %v", got, want)
		}
	}
	if len(a.started) != 1 || a.started["started"] != "node-a" {
		t.Errorf("remembered starts %v, want only the one the cache has not caught up with", a.started)
	}
}
