package launcherpodapi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestCurrentPodName(t *testing.T) {
	first := PodName("vm", "vmi-uid")
	cases := []struct {
		name  string
		state *v1.VirtualMachineInstanceMigrationState
		want  string
	}{
		{"never migrated", nil, first},
		{"first migration in flight", &v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: "t1"}, first},
		{"first migration completed", &v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: "t1", Completed: true}, "t1"},
		{"first migration failed", &v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: "t1", Failed: true}, first},
		{"completed and failed counts as failed", &v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: "t1", Completed: true, Failed: true}, first},
		{"second migration in flight from the first's target", &v1.VirtualMachineInstanceMigrationState{SourcePod: "t1", TargetPod: "t2"}, "t1"},
		{"second migration completed", &v1.VirtualMachineInstanceMigrationState{SourcePod: "t1", TargetPod: "t2", Completed: true}, "t2"},
		{"state without pods", &v1.VirtualMachineInstanceMigrationState{Completed: true}, first},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", UID: "vmi-uid"},
				Status: v1.VirtualMachineInstanceStatus{MigrationState: c.state}}
			if got := CurrentPodName(vmi); got != c.want {
				t.Errorf("CurrentPodName = %q, want %q", got, c.want)
			}
		})
	}
}
