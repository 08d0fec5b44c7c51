package nodeagent

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// streamSockets maps a stream kind to the launcher's socket it splices.
var streamSockets = map[string]string{StreamConsole: protocol.ConsoleSocket, StreamVNC: protocol.VNCSocket}

// httpError is a refusal with its HTTP status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// registerStreams adds the console and VNC endpoints to mux.
func (a *Agent) registerStreams(mux *http.ServeMux) {
	mux.HandleFunc(nodeagentapi.StreamPattern, a.serveStream)
	mux.HandleFunc(nodeagentapi.ScreenshotPattern, a.serveScreenshot)
}

// serveStream opens a console or VNC session with the VMI's current launcher on this node. The
// launcher is found in the agent's own caches from the VMI's namespace and name; nothing from the
// request becomes part of a path.
func (a *Agent) serveStream(w http.ResponseWriter, r *http.Request) {
	key := streamKey{namespace: r.PathValue("namespace"), name: r.PathValue("name"), kind: r.PathValue("kind")}
	sockName, ok := streamSockets[key.kind]
	if !ok {
		http.Error(w, fmt.Sprintf("unknown stream %q: use console or vnc", key.kind), http.StatusNotFound)
		return
	}
	if err := checkStreamRequest(r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	preserve := false
	if v := r.URL.Query().Get("preserveSession"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil || key.kind != StreamVNC {
			http.Error(w, fmt.Sprintf("preserveSession=%q: only vnc takes it, as true or false", v), http.StatusBadRequest)
			return
		}
		preserve = b
	}
	podUID, herr := a.streamLauncher(key.namespace, key.name)
	if herr != nil {
		http.Error(w, herr.msg, herr.code)
		return
	}
	sock, err := a.dirs.dialSocket(r.Context(), podUID, sockName)
	if err != nil {
		http.Error(w, fmt.Sprintf("the %s of VMI %s/%s is not reachable on this node: %v", key.kind, key.namespace, key.name, err), http.StatusServiceUnavailable)
		return
	}
	st, prev, err := a.streams.reserve(key, preserve, sock)
	switch {
	case errors.Is(err, errBusy):
		sock.Close()
		http.Error(w, fmt.Sprintf("VMI %s/%s already has an active VNC session and preserveSession=true was asked", key.namespace, key.name), http.StatusServiceUnavailable)
		return
	case err != nil:
		sock.Close()
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	st.sockEnded = func() string { return a.sockEndMessage(podUID, key.namespace, key.name) }
	replaced := CloseTakenOver
	if key.kind == StreamVNC {
		replaced = CloseVNCReplaced
	}
	a.streams.serve(w, r, st, prev, replaced)
}

// streamLauncher finds the launcher Pod that runs VMI namespace/name on this node now.
func (a *Agent) streamLauncher(namespace, name string) (types.UID, *httpError) {
	vmi, err := a.vmis.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return "", &httpError{http.StatusNotFound, fmt.Sprintf("VMI %s/%s does not run on this node", namespace, name)}
	}
	if err != nil {
		return "", &httpError{http.StatusInternalServerError, err.Error()}
	}
	if herr := streamablePhase(vmi); herr != nil {
		return "", herr
	}
	pod, err := a.launcherPod(vmi)
	if err != nil {
		return "", &httpError{http.StatusInternalServerError, err.Error()}
	}
	if launcherEnded(pod) {
		return "", &httpError{http.StatusConflict, fmt.Sprintf("VMI %s/%s has no running launcher on this node: %s", namespace, name, podEndMessage(pod))}
	}
	return pod.UID, nil
}

// streamablePhase refuses a VMI that is not running: 400 before it runs, 409 once it ended
// (KubeVirt's codes).
func streamablePhase(vmi *v1.VirtualMachineInstance) *httpError {
	switch vmi.Status.Phase {
	case v1.Running:
		return nil
	case v1.Succeeded, v1.Failed:
		return &httpError{http.StatusConflict, fmt.Sprintf("VMI %s/%s has ended (phase %s)", vmi.Namespace, vmi.Name, vmi.Status.Phase)}
	default:
		return &httpError{http.StatusBadRequest, fmt.Sprintf("VMI %s/%s is not running yet (phase %q)", vmi.Namespace, vmi.Name, vmi.Status.Phase)}
	}
}

// endStreamsOnStop ends a VMI's sessions when it stops running on this node, or is gone. A VMI
// that moved to another node by migration leaves this agent's informer too (it lists this
// node's VMIs), often before the source launcher's sockets close: its sessions end saying so.
// The object a VMI leaves the informer with is the last one that was on this node: its
// migration state may not say Completed yet, and its status.nodeName is still this node.
func (a *Agent) endStreamsOnStop(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return
	}
	msg := CloseVMIStopped
	if migratedAway(vmi, a.opts.NodeName) {
		msg = CloseVMIMigrated
	}
	klog.InfoS("The VMI left this node: ending its stream sessions", "vmi", klog.KObj(vmi), "reason", msg)
	a.streams.endVMI(vmi.Namespace, vmi.Name, msg)
}

// migratedAway reports whether vmi, as it left node's informer, was leaving by a migration to
// another node: one from this node that ran and had not failed, the VMI not being deleted.
func migratedAway(vmi *v1.VirtualMachineInstance, node string) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.SourceNode == node && ms.TargetNode != "" && ms.TargetNode != node &&
		ms.StartTimestamp != nil && !ms.Failed && vmi.DeletionTimestamp == nil
}

// sockEndMessage says why the console or VNC socket of VMI namespace/name's launcher Pod podUID
// ended: the guest left it by migration (as its launcher or the VMI says), or it stopped.
func (a *Agent) sockEndMessage(podUID types.UID, namespace, name string) string {
	dom := a.launcherStatus(podUID)
	if dom != nil && (dom.Phase == protocol.DomainMigrated || dom.Migration != nil && dom.Migration.UID != "" &&
		(dom.Migration.Phase == protocol.MigrationRunning || dom.Migration.Phase == protocol.MigrationCompleted)) {
		return CloseVMIMigrated
	}
	if vmi, err := a.vmis.VirtualMachineInstances(namespace).Get(name); err == nil && migratedAway(vmi, a.opts.NodeName) {
		return CloseVMIMigrated
	}
	return CloseVMIStopped
}

// vmiUpdated ends a VMI's sessions once it is no longer Running.
func (a *Agent) vmiUpdated(obj any) {
	if vmi, ok := obj.(*v1.VirtualMachineInstance); ok && vmi.Status.Phase != v1.Running {
		a.streams.endVMI(vmi.Namespace, vmi.Name, CloseVMIStopped)
	}
}
