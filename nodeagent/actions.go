package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// actionTimeout bounds a launcher's answer to an action: libvirt answers a pause, resume or
// ACPI press at once; a launcher that does not is stuck.
const actionTimeout = 30 * time.Second

// vmiActions maps the VMI actions' names in the path to the launcher's calls.
var vmiActions = map[string]string{
	"pause":      protocol.ActionPause,
	"unpause":    protocol.ActionUnpause,
	"softreboot": protocol.ActionSoftReboot,
	"reset":      protocol.ActionReset,
	"freeze":     actionFreeze,
	"unfreeze":   protocol.ActionUnfreeze,
}

// actionFreeze marks freeze, which takes the unfreeze timeout (nodeagentapi.UnfreezeTimeoutParam).
const actionFreeze = "Freeze"

// registerActions adds the VMI actions to mux, and the guest agent's info (serveGuestInfo):
// PUT .../virtualmachineinstances/{name}/{action}
// with the query uid= (the VMI's UID as vireo-apiserver read it), answered 200, 404 (no such VMI
// on this node), 409 (its state does not allow the action; the body says why) or 503.
func (a *Agent) registerActions(mux *http.ServeMux) {
	mux.HandleFunc(nodeagentapi.ActionPattern, a.serveAction)
	mux.HandleFunc(nodeagentapi.GuestInfoPattern, a.serveGuestInfo)
}

func (a *Agent) serveAction(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	call, ok := vmiActions[r.PathValue("action")]
	if !ok {
		http.Error(w, fmt.Sprintf("unknown action %q: use pause, unpause, softreboot, reset, freeze or unfreeze", r.PathValue("action")), http.StatusNotFound)
		return
	}
	client, herr := a.actionClient(namespace, name, r.URL.Query().Get("uid"))
	if herr != nil {
		herr.Write(w)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	var err error
	if call == actionFreeze {
		timeout, perr := time.ParseDuration(r.URL.Query().Get(nodeagentapi.UnfreezeTimeoutParam))
		if perr != nil || timeout <= 0 {
			http.Error(w, fmt.Sprintf("freeze needs a positive %s duration", nodeagentapi.UnfreezeTimeoutParam), http.StatusBadRequest)
			return
		}
		err = client.Freeze(ctx, timeout)
	} else {
		err = client.Action(ctx, call)
	}
	if err != nil {
		if status.Code(err) != codes.FailedPrecondition {
			klog.ErrorS(err, "VMI action failed", "vmi", klog.KRef(namespace, name), "action", call)
		}
		writeLauncherError(w, err, fmt.Sprintf("the launcher of VMI %s/%s failed to %s", namespace, name, r.PathValue("action")))
		return
	}
	klog.InfoS("VMI action", "vmi", klog.KRef(namespace, name), "action", call)
	w.WriteHeader(http.StatusOK)
}

// writeLauncherError answers a launcher's refusal (FailedPrecondition) as 409 with its message,
// any other failure as 500, its message after what.
func writeLauncherError(w http.ResponseWriter, err error, what string) {
	if status.Code(err) == codes.FailedPrecondition {
		http.Error(w, status.Convert(err).Message(), http.StatusConflict)
		return
	}
	http.Error(w, what+": "+status.Convert(err).Message(), http.StatusInternalServerError)
}

// serveGuestInfo answers GuestInfoPattern (query uid= as for actions): 200 with the launcher's
// answer in JSON, 409 when the guest has no agent connected or does not run.
func (a *Agent) serveGuestInfo(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	client, herr := a.actionClient(namespace, name, r.URL.Query().Get("uid"))
	if herr != nil {
		herr.Write(w)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	info, err := client.GuestInfo(ctx)
	if err != nil {
		writeLauncherError(w, err, fmt.Sprintf("the launcher of VMI %s/%s could not ask the guest agent", namespace, name))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(info)
}

// actionClient is the connection to the launcher that runs VMI namespace/name on this node now.
// uid, when set, must be the VMI's: an action never reaches a VMI created after the request
// was checked.
func (a *Agent) actionClient(namespace, name, uid string) (*protocol.Client, *nodeagentapi.Error) {
	if vmi, err := a.vmis.VirtualMachineInstances(namespace).Get(name); err == nil && uid != "" && string(vmi.UID) != uid {
		return nil, &nodeagentapi.Error{Code: http.StatusConflict, Message: fmt.Sprintf("VMI %s/%s was replaced (UID %s, not %s)", namespace, name, vmi.UID, uid)}
	}
	_, pod, herr := a.runningLauncher(namespace, name)
	if herr != nil {
		if herr.Code == http.StatusBadRequest {
			// Not running yet: for an action that is a conflict with the VMI's state.
			herr.Code = http.StatusConflict
		}
		return nil, herr
	}
	if s := a.sessions.Get(pod.UID); s != nil {
		if client, _, _ := s.State(); client != nil {
			return client, nil
		}
	}
	return nil, &nodeagentapi.Error{Code: http.StatusServiceUnavailable,
		Message: fmt.Sprintf("the node agent is not connected to the launcher of VMI %s/%s yet: try again", namespace, name)}
}
