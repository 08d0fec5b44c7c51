// Package ownership sorts the objects of a namespace for a controller that owns some of them by
// selector (replica sets own VMIs, pools own VMs), as Kubernetes' controller reference managers
// do: those it controls, the orphans it adopts, and those it releases.
package ownership

import (
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
