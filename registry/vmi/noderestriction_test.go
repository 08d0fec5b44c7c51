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
