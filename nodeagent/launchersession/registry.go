package launchersession

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// Registry is the sessions of one node agent, by launcher Pod UID.
type Registry struct {
	dirs   nodedirs.Dirs
	notify Notify

	mu       sync.Mutex
	sessions map[types.UID]*Session
	closed   bool
}

// NewRegistry returns an empty registry whose sessions reach launchers in dirs and call notify
// on their events.
func NewRegistry(dirs nodedirs.Dirs, notify Notify) *Registry {
	return &Registry{dirs: dirs, notify: notify, sessions: map[types.UID]*Session{}}
}

// Ensure returns the session with the launcher of Pod podUID, starting one for VMI vmiUID
// (vmiKey, its namespace/name) when there is none. Once StopAll was called it returns a
// stopped session, which is never connected.
func (r *Registry) Ensure(podUID, vmiUID types.UID, vmiKey string) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sessions[podUID]; s != nil {
		return s
	}
	s := start(r.dirs, podUID, vmiUID, vmiKey, r.notify)
	if r.closed {
		s.Stop()
		return s
	}
	r.sessions[podUID] = s
	return s
}

// Get is the session with the launcher of Pod podUID (nil: none).
func (r *Registry) Get(podUID types.UID) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[podUID]
}

// Status is the last status the launcher of Pod podUID reported (nil: no session or none yet).
func (r *Registry) Status(podUID types.UID) *protocol.DomainStatus {
	s := r.Get(podUID)
	if s == nil {
		return nil
	}
	_, dom, _ := s.State()
	return dom
}

// PodUIDs are the launcher Pods that have a session.
func (r *Registry) PodUIDs() []types.UID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Keys(r.sessions))
}

// Forget stops and forgets the session with the launcher of Pod podUID, if any.
func (r *Registry) Forget(podUID types.UID) {
	r.mu.Lock()
	s := r.sessions[podUID]
	delete(r.sessions, podUID)
	r.mu.Unlock()
	if s != nil {
		s.Stop()
	}
}

// StopAll stops every session; none starts afterwards.
func (r *Registry) StopAll() {
	r.mu.Lock()
	sessions := r.sessions
	r.sessions, r.closed = map[types.UID]*Session{}, true
	r.mu.Unlock()
	for _, s := range sessions {
		s.Stop()
	}
}
