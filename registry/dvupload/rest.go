// Package dvupload serves a DataVolume's upload subresource (datavolumes/upload): it checks the
// DataVolume, then relays each request of the upload protocol (GET the position, PUT a chunk;
// package uploadapi) to the node agent of the node its upload Pod runs on, which passes it to
// that Pod's socket. Each chunk is an ordinary request, well under kube-apiserver's 60 s limit,
// so an upload of any size and speed goes through aggregation. Authorization (get or update on
// the subresource) happened in the server's filters.
package dvupload

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Getter reads DataVolumes (the DataVolume store).
type Getter = storeutil.Getter

// REST is the upload subresource of datavolumes.
type REST struct {
	dvs    Getter
	agents *agentclient.Client
}

// New returns the upload subresource of the DataVolumes in dvs.
func New(dvs Getter, agents *agentclient.Client) *REST {
	return &REST{dvs: dvs, agents: agents}
}

var _ rest.Connecter = &REST{}

// New is the object the subresource is attached to.
func (r *REST) New() runtime.Object { return &cdiv1beta1.DataVolume{} }

// Destroy releases nothing: the store is owned elsewhere.
func (r *REST) Destroy() {}

// ConnectMethods: GET asks the position, PUT sends a chunk.
func (r *REST) ConnectMethods() []string { return []string{http.MethodGet, http.MethodPut} }

// NewConnectOptions: none are decoded; offset and final pass through to the importer.
func (r *REST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// Connect checks the DataVolume and returns the relay to its upload Pod's node agent.
func (r *REST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	dv, err := storeutil.Get[*cdiv1beta1.DataVolume](ctx, r.dvs, name)
	if err != nil {
		return nil, err
	}
	node, err := Uploadable(dv)
	if err != nil {
		return nil, err
	}
	return &handler{rest: r, dv: dv, node: node, responder: responder}, nil
}

// Uploadable returns the node of dv's upload Pod, or why dv takes no upload now: 400 without
// an upload source, 409 once it ended, 503 (try again) while its upload Pod is not ready.
func Uploadable(dv *cdiv1beta1.DataVolume) (string, error) {
	gr := cdiv1beta1.Resource("datavolumes")
	if dv.Spec.Source == nil || dv.Spec.Source.Upload == nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("DataVolume %s/%s has no upload source (spec.source.upload): it takes no upload", dv.Namespace, dv.Name))
	}
	switch dv.Status.Phase {
	case cdiv1beta1.Succeeded:
		return "", apierrors.NewConflict(gr, dv.Name, fmt.Errorf("the upload has completed (phase Succeeded): delete and recreate the DataVolume to upload another image"))
	case cdiv1beta1.Failed:
		return "", apierrors.NewConflict(gr, dv.Name, fmt.Errorf("the upload has failed (phase Failed)%s", conditionMessage(dv)))
	}
	node := dv.Annotations[v1.UploadNodeAnnotation]
	if node == "" || dv.Status.Phase != cdiv1beta1.UploadReady {
		phase := string(dv.Status.Phase)
		if phase == "" {
			phase = string(cdiv1beta1.Pending)
		}
		err := apierrors.NewServiceUnavailable(fmt.Sprintf("the upload server of DataVolume %s/%s is not ready yet (phase %s): try again", dv.Namespace, dv.Name, phase))
		err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: 2}
		return "", err
	}
	return node, nil
}

// conditionMessage is ": " and the Running condition's message, when there is one.
func conditionMessage(dv *cdiv1beta1.DataVolume) string {
	for _, c := range dv.Status.Conditions {
		if c.Type == cdiv1beta1.DataVolumeRunning && c.Message != "" {
			return ": " + c.Message
		}
	}
	return ""
}

type handler struct {
	rest      *REST
	dv        *cdiv1beta1.DataVolume
	node      string
	responder rest.Responder
}

// ServeHTTP relays the request to the node agent with the protocol's parameters and the
// DataVolume's UID (so that a DataVolume recreated meanwhile never receives it), without the
// user's credentials.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	query := url.Values{"uid": {string(h.dv.UID)}}
	for _, k := range []string{uploadapi.OffsetParam, uploadapi.FinalParam} {
		if v := req.URL.Query().Get(k); v != "" {
			query.Set(k, v)
		}
	}
	p, err := h.rest.agents.Proxy(h.node, nodeagentapi.DataVolumeUploadPath(h.dv.Namespace, h.dv.Name), query, false, agentclient.ResponderErrors(h.responder))
	if err != nil {
		h.responder.Error(apierrors.NewServiceUnavailable(fmt.Sprintf("the upload of DataVolume %s/%s is unavailable: %v", h.dv.Namespace, h.dv.Name, err)))
		return
	}
	out := agentclient.WithoutCredentials(req)
	// The handler takes a plain request's query from the request, not from the location.
	out.URL.RawQuery = p.Location.RawQuery
	p.ServeHTTP(w, out)
}
