package vmi

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// NodeNameExtra is the user-info extra in which kube-apiserver names the node of a Pod-bound
// ServiceAccount token (Kubernetes 1.32 and later); aggregation forwards it to vireo-apiserver.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

// validateNodeRestriction confines a node agent to the VMIs of its own node, as KubeVirt
// confines virt-handler: the agent's identity must carry its node (a token bound to its Pod),
// the VMI must be on that node, and the update must not move the VMI to another node. Without
// it, a compromised node could rewrite the status of every VMI in the cluster.
func validateNodeRestriction(ctx context.Context, o, old *v1.VirtualMachineInstance) field.ErrorList {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok || u.GetName() != v1.NodeAgentUser {
		return nil
	}
	path := field.NewPath("status", "nodeName")
	nodes := u.GetExtra()[NodeNameExtra]
	if len(nodes) != 1 || nodes[0] == "" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"%s carries no node name: the node agent must authenticate with a ServiceAccount token bound to its Pod", v1.NodeAgentUser))}
	}
	node := nodes[0]
	if old.Status.NodeName != node {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the node agent of node %s may not change a VMI of node %q", node, old.Status.NodeName))}
	}
	if o.Status.NodeName != node {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the node agent of node %s may not move a VMI to node %q", node, o.Status.NodeName))}
	}
	return nil
}
