package vmi

import (
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestDerivedNodeLabels: kubevirt.io/nodeName follows status.nodeName, and
// kubevirt.io/migrationTargetNodeName names the target node only while a migration is in flight.
func TestDerivedNodeLabels(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.Labels = map[string]string{v1.MigrationTargetNodeNameLabel: "forged", "app": "x"}
	vmi.Status.NodeName = "node-a"
	deriveNodeNameLabel(vmi)
	if vmi.Labels[v1.NodeNameLabel] != "node-a" || vmi.Labels["app"] != "x" {
		t.Errorf("labels %v", vmi.Labels)
	}
	if _, ok := vmi.Labels[v1.MigrationTargetNodeNameLabel]; ok {
		t.Errorf("a label no migration backs was kept: %v", vmi.Labels)
	}
	vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m", SourceNode: "node-a", TargetNode: "node-b"}
	deriveNodeNameLabel(vmi)
	if vmi.Labels[v1.MigrationTargetNodeNameLabel] != "node-b" {
		t.Errorf("in flight: labels %v", vmi.Labels)
	}
	vmi.Status.MigrationState.Completed = true
	vmi.Status.NodeName = "node-b"
	deriveNodeNameLabel(vmi)
	if _, ok := vmi.Labels[v1.MigrationTargetNodeNameLabel]; ok || vmi.Labels[v1.NodeNameLabel] != "node-b" {
		t.Errorf("after the migration: labels %v", vmi.Labels)
	}
}
