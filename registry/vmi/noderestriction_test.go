package vmi

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestNodeRestriction(t *testing.T) {
	onNode := func(node string) *v1.VirtualMachineInstance {
		return &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{NodeName: node}}
	}
	agent := func(extra map[string][]string) context.Context {
		return genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: v1.NodeAgentUser, Extra: extra})
	}
	nodeA := map[string][]string{NodeNameExtra: {"node-a"}}
	migrating := func(target string, done bool, edit func(*v1.VirtualMachineInstanceStatus)) *v1.VirtualMachineInstance {
		vmi := onNode("node-b")
		vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-b", TargetNode: target, Completed: done}
		if edit != nil {
			edit(&vmi.Status)
		}
		return vmi
	}
	address := func(st *v1.VirtualMachineInstanceStatus) { st.MigrationState.TargetNodeAddress = "10.0.0.1:8186" }
	cases := []struct {
		name     string
		ctx      context.Context
		old, new *v1.VirtualMachineInstance
		refused  string
	}{
		{"own node", agent(nodeA), onNode("node-a"), onNode("node-a"), ""},
		{"another node's VMI", agent(nodeA), onNode("node-b"), onNode("node-b"), "may not change a VMI of node \"node-b\""},
		{"an unscheduled VMI", agent(nodeA), onNode(""), onNode("node-a"), "may not change"},
		{"moving it away", agent(nodeA), onNode("node-a"), onNode("node-b"), "may not move"},
		{"the target of a migration writes its state", agent(nodeA), migrating("node-a", false, nil), migrating("node-a", false, address), ""},
		{"the target may not touch the rest", agent(nodeA), migrating("node-a", false, nil),
			migrating("node-a", false, func(st *v1.VirtualMachineInstanceStatus) { st.Phase = v1.Failed }), "may change only status.migrationState"},
		{"the target may not move the VMI", agent(nodeA), migrating("node-a", false, nil),
			migrating("node-a", false, func(st *v1.VirtualMachineInstanceStatus) { st.NodeName = "node-a" }), "may change only"},
		{"the target may not retarget it", agent(nodeA), migrating("node-a", false, nil),
			migrating("node-a", false, func(st *v1.VirtualMachineInstanceStatus) { st.MigrationState.TargetNode = "node-c" }), "may not replace"},
		{"an ended migration's target", agent(nodeA), migrating("node-a", true, nil), migrating("node-a", true, address), "may not change a VMI of node"},
		{"another node's migration", agent(nodeA), migrating("node-c", false, nil), migrating("node-c", false, address), "may not change a VMI of node"},
		{"no node name in the identity", agent(nil), onNode("node-a"), onNode("node-a"), "bound to its Pod"},
		{"other users are not restricted", genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"}), onNode("node-b"), onNode("node-c"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := validateNodeRestriction(c.ctx, c.new, c.old)
			switch {
			case c.refused == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case c.refused != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.refused)):
				t.Errorf("errors %v, want one saying %q", errs, c.refused)
			}
		})
	}
}
