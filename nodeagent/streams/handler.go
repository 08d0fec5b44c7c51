package streams

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// streamSockets maps a stream kind to the launcher's socket it splices.
var streamSockets = map[string]string{nodeagentapi.StreamConsole: protocol.ConsoleSocket, nodeagentapi.StreamVNC: protocol.VNCSocket}

// Register adds the console, VNC and screenshot endpoints to mux.
func (s *Server) Register(mux *http.ServeMux) {
	mux.HandleFunc(nodeagentapi.StreamPattern, s.serveStream)
	mux.HandleFunc(nodeagentapi.ScreenshotPattern, s.serveScreenshot)
}

// serveStream opens a console or VNC session with the VMI's current launcher on this node. The
// launcher is found in the agent's own caches from the VMI's namespace and name; nothing from the
// request becomes part of a path.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
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
	preserve, err := vncFlag(r, key.kind, "preserveSession")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	shared, err := vncFlag(r, key.kind, "shared")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	podUID, herr := s.launchers.Running(key.namespace, key.name)
	if herr != nil {
		herr.Write(w)
		return
	}
	sock, err := s.dirs.DialSocket(r.Context(), podUID, sockName)
	if err != nil {
		http.Error(w, fmt.Sprintf("the %s of VMI %s/%s is not reachable on this node: %v", key.kind, key.namespace, key.name, err), http.StatusServiceUnavailable)
		return
	}
	var st, prev *stream
	if shared {
		st, err = s.reserveViewer(key, sock)
	} else {
		st, prev, err = s.reserve(key, preserve, sock)
	}
	switch {
	case errors.Is(err, errTooManyViewers):
		sock.Close()
		http.Error(w, fmt.Sprintf("VMI %s/%s already has %d shared VNC viewers, the most a display takes", key.namespace, key.name, maxSharedViewers), http.StatusServiceUnavailable)
		return
	case errors.Is(err, errBusy):
		sock.Close()
		http.Error(w, fmt.Sprintf("VMI %s/%s already has an active VNC session and preserveSession=true was asked", key.namespace, key.name), http.StatusServiceUnavailable)
		return
	case err != nil:
		sock.Close()
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	st.sockEnded = func() string { return s.launchers.EndMessage(podUID, key.namespace, key.name) }
	replaced := nodeagentapi.CloseTakenOver
	if key.kind == nodeagentapi.StreamVNC {
		replaced = nodeagentapi.CloseVNCReplaced
	}
	s.serve(w, r, st, prev, replaced)
}

// vncFlag reads the boolean query parameter name, which only vnc takes (false when absent).
func vncFlag(r *http.Request, kind, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil || kind != nodeagentapi.StreamVNC {
		return false, fmt.Errorf("%s=%q: only vnc takes it, as true or false", name, v)
	}
	return b, nil
}
