package kubevirt

import (
	"context"
	"fmt"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Singleton keeps the installation to one KubeVirt object: a new one is refused while another
// exists. As with KubeVirt's admission webhook, two objects created at the same instant (on two
// vireo-apiserver replicas) can both pass; readers then follow the oldest (package
// internal/clusterconfig).
type Singleton struct {
	// Store lists the stored KubeVirt objects.
	Store rest.Lister
}

// check refuses kv when a KubeVirt object of another name exists in the installation's
// namespace (validation keeps them all there). Re-creating an existing name is left to the
// store, which answers AlreadyExists.
func (s *Singleton) check(ctx context.Context, kv *v1.KubeVirt) field.ErrorList {
	path := field.NewPath("metadata", "name")
	if s == nil || s.Store == nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("KubeVirt admission is not wired to the KubeVirt store"))}
	}
	ctx = genericapirequest.WithNamespace(ctx, v1.InstallNamespace)
	obj, err := s.Store.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	list, ok := obj.(*v1.KubeVirtList)
	if !ok {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("unexpected list %T from the KubeVirt store", obj))}
	}
	for _, other := range list.Items {
		if other.Name == kv.Name {
			continue
		}
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"KubeVirt %s/%s already holds this installation's settings, and Vireo honours only one KubeVirt object: change that one (kubectl -n %s edit kubevirt %s), or delete it first",
			other.Namespace, other.Name, other.Namespace, other.Name))}
	}
	return nil
}
