// Package nodeagentapi is the node agent's HTTPS API as vireo-apiserver (its one client, over
// mutual TLS) and the node agent (its server) both know it: the port, the name the agent's
// serving certificate holds, how its Pods are found, the paths of its streams, actions,
// screenshots and upload relay (streams speak v1.PlainStreamProtocolName). Paths are the
// server's patterns (net/http's ServeMux, with {wildcards}); the client fills them in with the
// functions below. Migrations between node agents have their own path (MigrationPath). Stream
// sessions end with one of the Close messages; a refusal is an Error (status and message).
package nodeagentapi

import (
	"net/http"
	"net/url"
)

const (
	// Port is the node agents' HTTPS port.
	Port = 8186
	// ServerName is the name the node agents' serving certificates hold.
	ServerName = "vireo-nodeagent.vireo-system.svc"
	// Namespace and Selector find the node agent Pods.
	Namespace = "vireo-system"
	Selector  = "app.kubernetes.io/name=vireo-nodeagent"
)

// The server's patterns.
const (
	// StreamPattern serves a VMI's console or vnc stream ({kind}), a websocket.
	StreamPattern = "GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/{kind}"
	// ScreenshotPattern serves a PNG of a VMI's display.
	ScreenshotPattern = "GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/vnc/screenshot"
	// GuestInfoPattern answers what the guest agent of a VMI says of its guest, as KubeVirt's
	// VirtualMachineInstanceGuestAgentInfo in JSON (409 without a connected agent).
	GuestInfoPattern = "GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/" + GuestInfo
	// ActionPattern runs a VMI action ({action}: pause, unpause, softreboot, reset, freeze, unfreeze).
	ActionPattern = "PUT /v1/namespaces/{namespace}/virtualmachineinstances/{name}/{action}"
	// UploadPath is the relay of a DataVolume's upload (GET and PUT, the upload protocol).
	UploadPath = "/v1/namespaces/{namespace}/datavolumes/{name}/upload"
	// MigrationPath starts the paths one node agent reaches another's migration sockets at:
	// MigrationPath + "{uid}/{socket}".
	MigrationPath = "/v1/migrations/"
)

// GuestInfo is the last element of GuestInfoPattern.
const GuestInfo = "guestinfo"

// UnfreezeTimeoutParam is the query parameter of the freeze action: a Go duration after which
// the launcher thaws the guest's filesystems if no unfreeze came first.
const UnfreezeTimeoutParam = "unfreezeTimeout"

// VMIPath is the path of subresource (console, vnc, vnc/screenshot, pause, ...) of VMI
// namespace/name.
func VMIPath(namespace, name, subresource string) string {
	return "/v1/namespaces/" + url.PathEscape(namespace) + "/virtualmachineinstances/" + url.PathEscape(name) + "/" + subresource
}

// DataVolumeUploadPath is the upload relay's path of DataVolume namespace/name.
func DataVolumeUploadPath(namespace, name string) string {
	return "/v1/namespaces/" + url.PathEscape(namespace) + "/datavolumes/" + url.PathEscape(name) + "/upload"
}

// Stream kinds: the {kind} of StreamPattern.
const (
	StreamConsole = "console"
	StreamVNC     = "vnc"
)

// Close messages a stream's client reads when the node agent ends its session.
const (
	CloseTakenOver   = "console session taken over: another client connected to the same VMI"
	CloseVNCReplaced = "VNC session replaced: another client connected to the same VMI"
	CloseVMIStopped  = "the VMI stopped"
	CloseVMIMigrated = "the VMI migrated to a new launcher: connect again to reach it there"
	CloseAgentExits  = "the node agent is shutting down"
)

// Error is a refusal of the API: the HTTP status and the message the response's body carries.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// Write answers w with the refusal.
func (e *Error) Write(w http.ResponseWriter) { http.Error(w, e.Message, e.Code) }
