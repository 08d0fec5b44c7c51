// Package ownership sorts the objects of a namespace for a controller that owns some of them by
// selector (replica sets own VMIs, pools own VMs), as Kubernetes' controller reference managers
// do: those it controls, the orphans it adopts, and those it releases.
package ownership

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Members are the objects of a namespace as one owner sees them.
type Members[T metav1.Object] struct {
	// Controlled are the objects the owner controls that its selector matches and that are not
	// being deleted.
	Controlled []T
	// Adopt are objects without a controller that the selector matches, not being deleted, that
	// adoptable accepts (and the owner is not being deleted).
	Adopt []T
	// Release are objects the owner controls that its selector no longer matches.
	Release []T
}

// Sort finds the members of owner among objs.
func Sort[T metav1.Object](owner metav1.Object, selector labels.Selector, objs []T, adoptable func(T) bool) Members[T] {
	var m Members[T]
	for _, o := range objs {
		matches := selector.Matches(labels.Set(o.GetLabels()))
		ref := metav1.GetControllerOf(o)
		switch {
		case ref == nil && matches && o.GetDeletionTimestamp() == nil && owner.GetDeletionTimestamp() == nil && adoptable(o):
			m.Adopt = append(m.Adopt, o)
		case ref == nil || ref.UID != owner.GetUID():
		case !matches:
			m.Release = append(m.Release, o)
		case o.GetDeletionTimestamp() == nil:
			m.Controlled = append(m.Controlled, o)
		}
	}
	return m
}

// MayAdopt re-reads the owner from the API server (get must not answer from a cache) and says
// whether it may still adopt: the same object, not being deleted. Kubernetes' controller
// reference managers check the same before their first adoption, because an informer's cache
// of the owners can lag the one of the objects: when an owner is deleted with its dependents
// orphaned, the garbage collector releases them and removes the owner, and a controller that
// still saw the owner alive would take them back, only for the collector to delete them as the
// dependents of an owner that is gone.
func MayAdopt(ctx context.Context, owner metav1.Object, get func(context.Context) (metav1.Object, error)) (bool, error) {
	fresh, err := get(ctx)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s again before adopting: %w", owner.GetName(), err)
	}
	return fresh.GetUID() == owner.GetUID() && fresh.GetDeletionTimestamp() == nil, nil
}
