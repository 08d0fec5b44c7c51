package storeutil

import (
	"context"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
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

// VMIReader is what a VMI subresource read with GET (console, VNC, guest info) needs besides
// Connect, for embedding in its rest.Connecter: it belongs to VMIs, owns no store and decodes no
// options (what it reads of the query, its handler reads).
type VMIReader struct{}

// New is the object the subresource is attached to.
func (VMIReader) New() runtime.Object { return &v1.VirtualMachineInstance{} }

// Destroy releases nothing: the store is owned elsewhere.
func (VMIReader) Destroy() {}

// ConnectMethods: GET (a websocket upgrade is one too).
func (VMIReader) ConnectMethods() []string { return []string{http.MethodGet} }

// NewConnectOptions: none are decoded.
func (VMIReader) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }
