// Package vmistream serves a VMI's serial console and VNC display (the subresources
// virtualmachineinstances/console and /vnc): it checks the request and the VMI, then proxies the
// websocket upgrade unchanged to the node agent of the VMI's node, which splices it with the
// launcher's socket. When vireo-apiserver stops, each session it relays ends with a close
// message saying so (Sessions), between two of the node agent's frames. Authorization (get on the subresource) happened in the server's filters.
package vmistream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Subprotocol is the websocket subprotocol KubeVirt's clients send.
const Subprotocol = v1.PlainStreamProtocolName

// Kinds of stream: the subresource names.
const (
	Console = "console"
	VNC     = "vnc"
)

// Getter reads VMIs (the VMI store).
type Getter = storeutil.Getter

// REST is the console or VNC subresource of virtualmachineinstances.
type REST struct {
	storeutil.VMIReader
	kind     string
	vmis     Getter
	agents   *agentclient.Client
	sessions *Sessions
}

// New returns the subresource kind ("console" or "vnc") of the VMIs in vmis, its sessions
// kept in sessions.
func New(kind string, vmis Getter, agents *agentclient.Client, sessions *Sessions) *REST {
	registerMetrics()
	return &REST{kind: kind, vmis: vmis, agents: agents, sessions: sessions}
}

var _ rest.Connecter = &REST{}

// Connect checks the VMI (404 unknown, 400 not running yet, 409 ended) and returns the proxy to
// its node agent.
func (r *REST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	vmi, err := storeutil.Get[*v1.VirtualMachineInstance](ctx, r.vmis, name)
	if err != nil {
		return nil, err
	}
	if err := Streamable(vmi, r.kind); err != nil {
		return nil, err
	}
	return &handler{rest: r, vmi: vmi, responder: responder}, nil
}

// Streamable refuses a VMI that is not running: 400 before it runs (KubeVirt: "not running"),
// 409 once it ended.
func Streamable(vmi *v1.VirtualMachineInstance, kind string) error {
	gr := v1.Resource("virtualmachineinstances")
	switch vmi.Status.Phase {
	case v1.Running:
		return nil
	case v1.Succeeded, v1.Failed:
		return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("the VMI has ended (phase %s): no %s", vmi.Status.Phase, kind))
	default:
		phase := string(vmi.Status.Phase)
		if phase == "" {
			phase = "unset"
		}
		return apierrors.NewBadRequest(fmt.Sprintf("VMI %s/%s is not running (phase %s): its %s opens once it is Running", vmi.Namespace, vmi.Name, phase, kind))
	}
}

// CheckUpgrade refuses a request that is not a websocket upgrade offering Subprotocol.
func CheckUpgrade(req *http.Request, kind string) error {
	if !httpstream.IsUpgradeRequest(req) || !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		return apierrors.NewBadRequest(fmt.Sprintf("%s streams over a websocket: send GET with 'Connection: Upgrade', 'Upgrade: websocket' and subprotocol %s", kind, Subprotocol))
	}
	for _, h := range req.Header.Values("Sec-Websocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if strings.TrimSpace(p) == Subprotocol {
				return nil
			}
		}
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s needs websocket subprotocol %s (Sec-WebSocket-Protocol)", kind, Subprotocol))
}

type handler struct {
	rest      *REST
	vmi       *v1.VirtualMachineInstance
	responder rest.Responder
}

// ServeHTTP proxies the upgrade to the node agent, without the user's credentials or identity
// headers: the node agent trusts vireo-apiserver's certificate, not headers.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if err := CheckUpgrade(req, h.rest.kind); err != nil {
		h.responder.Error(err)
		return
	}
	if h.rest.sessions.Stopping() {
		h.responder.Error(apierrors.NewServiceUnavailable(ShuttingDown))
		return
	}
	query := url.Values{}
	if h.rest.kind == VNC {
		// preserveSession is KubeVirt's; shared is Vireo's (a viewer that replaces no one).
		for _, name := range []string{"preserveSession", "shared"} {
			if v := req.URL.Query().Get(name); v != "" {
				query.Set(name, v)
			}
		}
	}
	p, err := h.rest.agents.Proxy(h.vmi.Status.NodeName, nodeagentapi.VMIPath(h.vmi.Namespace, h.vmi.Name, h.rest.kind), query, true, agentclient.ResponderErrors(h.responder))
	if err != nil {
		h.responder.Error(apierrors.NewServiceUnavailable(fmt.Sprintf("the %s of VMI %s/%s is unavailable: %v", h.rest.kind, h.vmi.Namespace, h.vmi.Name, err)))
		return
	}
	out := agentclient.WithoutCredentials(req)
	defer track(h.rest.kind, h.vmi.Namespace, h.vmi.Name)()
	p.ServeHTTP(h.rest.sessions.writer(w), out)
}
