package storeutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// maxOptions bounds an action's options body.
const maxOptions = 64 << 10

// PutAction is an action subresource (start, stop, restart, pause, unpause, softreboot) as a
// rest.Connecter: PUT only, its options in the body (ReadOptions), no store of its own; Serve
// carries the action out, Success is the answer when it did.
type PutAction struct {
	// Object is the kind the subresource belongs to.
	Object  func() runtime.Object
	Success int
	Serve   func(ctx context.Context, name string, req *http.Request) error
}

// Connect returns the handler that carries out the action on the object name.
func (a PutAction) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if err := a.Serve(ctx, name, req); err != nil {
			responder.Error(err)
			return
		}
		w.WriteHeader(a.Success)
	}), nil
}

// New is the object the subresource is attached to.
func (a PutAction) New() runtime.Object { return a.Object() }

// Destroy releases nothing: the stores are owned elsewhere.
func (PutAction) Destroy() {}

// ConnectMethods: actions are PUTs.
func (PutAction) ConnectMethods() []string { return []string{http.MethodPut} }

// NewConnectOptions: the options are the request body, which ReadOptions decodes.
func (PutAction) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// ReadOptions decodes the options body of action (kind names its options type in errors) into
// into; an empty body leaves into as it is. Errors are the API's: 400, or 413 above 64 KiB.
func ReadOptions(req *http.Request, action, kind string, into any) error {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxOptions+1))
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s: reading the options: %v", action, err))
	}
	if len(body) > maxOptions {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("%s options are limited to %d bytes", action, maxOptions))
	}
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s: the body is not %s JSON: %v", action, kind, err))
	}
	return nil
}

// DryRun reads an action's dryRun option: true for ["All"], false for none; any other value is
// refused (400, as kube-apiserver refuses it on a create), so a typo never acts for real.
func DryRun(action string, values []string) (bool, error) {
	for _, d := range values {
		if d != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("%s: dryRun %q: the only dry run is %q", action, d, metav1.DryRunAll))
		}
	}
	return len(values) > 0, nil
}
