package storeutil

import (
	"context"
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ComponentUsers are the identities that may write what users may not (reserved labels):
// vireo-apiserver's own loopback client and the ServiceAccounts of Vireo's components,
// one by one, as artifacts/base/rbac defines them. Nothing else qualifies: not another
// ServiceAccount of vireo-system, not a group. On vireo-local the components authenticate
// with client certificates whose user names are these same ServiceAccount names.
var ComponentUsers = []string{
	user.APIServerUser,
	v1.APIServerUser,
	v1.ControllerUser,
	v1.NodeAgentUser,
}

// IsVireoComponent reports whether the request comes from a Vireo component rather
// than a user.
func IsVireoComponent(ctx context.Context) bool {
	u, ok := genericapirequest.UserFrom(ctx)
	return ok && slices.Contains(ComponentUsers, u.GetName())
}
