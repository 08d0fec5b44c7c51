package vmi

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
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
// it, a compromised node could rewrite the status of every VMI in the cluster. The one
// exception is a live migration's target: its agent may write the migration state (and only
// that) of a VMI migrating to its node.
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
	if old.Status.NodeName != node && migrationTargetOf(old) == node {
		return validateMigrationTargetUpdate(node, o, old)
	}
	if old.Status.NodeName != node {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the node agent of node %s may not change a VMI of node %q", node, old.Status.NodeName))}
	}
	if o.Status.NodeName != node {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("the node agent of node %s may not move a VMI to node %q", node, o.Status.NodeName))}
	}
	return nil
}

// migrationTargetOf is the node a VMI is migrating to ("" when no migration is in flight).
func migrationTargetOf(vmi *v1.VirtualMachineInstance) string {
	ms := vmi.Status.MigrationState
	if ms == nil || ms.Completed || ms.Failed {
		return ""
	}
	return ms.TargetNode
}

// validateMigrationTargetUpdate lets the agent of a migration's target node change the VMI's
// migration state, and nothing else, while the migration is in flight.
func validateMigrationTargetUpdate(node string, o, old *v1.VirtualMachineInstance) field.ErrorList {
	rest := o.Status.DeepCopy()
	rest.MigrationState = old.Status.MigrationState
	if !apiequality.Semantic.DeepEqual(*rest, old.Status) {
		return field.ErrorList{field.Forbidden(field.NewPath("status"), fmt.Sprintf(
			"the node agent of node %s, the target of the VMI's migration, may change only status.migrationState", node))}
	}
	if ms := o.Status.MigrationState; ms == nil || ms.MigrationUID != old.Status.MigrationState.MigrationUID || ms.TargetNode != node {
		return field.ErrorList{field.Forbidden(field.NewPath("status", "migrationState"), fmt.Sprintf(
			"the node agent of node %s may not replace the migration state of a VMI migrating to it", node))}
	}
	return nil
}
