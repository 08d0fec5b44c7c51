package storeutil

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

const (
	// ComponentNamespace is where Vireo's controller and node agents run; their
	// service accounts may write what users may not (reserved labels).
	ComponentNamespace = "vireo-system"
	// ComponentGroup is the group of Vireo components authenticated by client
	// certificate (as on the single-machine installation).
	ComponentGroup = "vireo:components"
)

// IsVireoComponent reports whether the request comes from a Vireo component rather
// than a user.
func IsVireoComponent(ctx context.Context) bool {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return false
	}
	if u.GetName() == user.APIServerUser {
		return true
	}
	if strings.HasPrefix(u.GetName(), "system:serviceaccount:"+ComponentNamespace+":") {
		return true
	}
	return slices.Contains(u.GetGroups(), ComponentGroup)
}
