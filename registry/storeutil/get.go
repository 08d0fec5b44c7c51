package storeutil

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Getter reads one object by name from a store (a rest.Getter).
type Getter interface {
	Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
}

// Get reads the object name from store as its type T; the store's error (404 for an unknown
// name) is returned as it is.
func Get[T runtime.Object](ctx context.Context, store Getter, name string) (T, error) {
	var zero T
	obj, err := store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	typed, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("unexpected object %T from the store of %T", obj, zero)
	}
	return typed, nil
}
