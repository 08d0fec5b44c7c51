package nodeagent

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/launcher/protocol"
)

// session is the node agent's connection to one launcher: it connects (retrying while the
// launcher starts), follows the launcher's domain events and calls notify on each, and
// reconnects when the stream breaks, until stopped.
type session struct {
	podUID types.UID
	vmiUID types.UID
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	client *protocol.Client
	domain *protocol.DomainStatus
	synced bool
	// handing: a handover (Sync) is in flight; handErr and handReason say why the last one
	// failed ("" after success).
	handing             bool
	handErr, handReason string
}

// startSession connects to the launcher of Pod podUID, which must serve the VMI vmiUID.
func startSession(ctx context.Context, dirs nodeDirs, podUID, vmiUID types.UID, notify func()) *session {
	ctx, cancel := context.WithCancel(ctx)
	s := &session{podUID: podUID, vmiUID: vmiUID, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx, dirs, notify)
	return s
}

func (s *session) run(ctx context.Context, dirs nodeDirs, notify func()) {
	defer close(s.done)
	log := klog.FromContext(ctx).WithValues("pod", s.podUID)
	// A new launcher binds its socket ~0.1-0.2 s after its Pod runs, and every start and
	// migration waits for this connection: retry often at first (dialling a unix socket is
	// cheap), and back off to 1 s for a launcher that is gone.
	backoff := wait.Backoff{Duration: 20 * time.Millisecond, Factor: 1.5, Cap: time.Second, Steps: 1 << 30}
	for ctx.Err() == nil {
		err := s.follow(ctx, dirs, notify)
		if ctx.Err() != nil {
			return
		}
		log.V(4).Info("Launcher not reachable; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
}

// follow connects once and relays domain events until the stream ends.
func (s *session) follow(ctx context.Context, dirs nodeDirs, notify func()) error {
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	client, err := protocol.Dial(dialCtx, dirs.dialLauncher(s.podUID))
	cancel()
	if err != nil {
		return err
	}
	defer client.Close()
	if client.Launcher.VMIUID != string(s.vmiUID) {
		klog.FromContext(ctx).Error(nil, "Launcher serves another VMI; not driving it", "pod", s.podUID, "want", s.vmiUID, "got", client.Launcher.VMIUID)
		<-ctx.Done()
		return ctx.Err()
	}
	recv, err := client.Events(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.client = client
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.client = nil
		s.mu.Unlock()
	}()
	for {
		st, err := recv()
		if err != nil {
			return err
		}
		s.mu.Lock()
		prev := s.domain
		s.domain = st
		s.mu.Unlock()
		if arrivedByMigration(prev, st) {
			observeArrival(st.Migration)
		}
		notify()
	}
}

// state returns the connected client (nil when not connected), the last domain status (nil
// before the first event) and whether the VMI was handed over in this session.
func (s *session) state() (*protocol.Client, *protocol.DomainStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dom *protocol.DomainStatus
	if s.domain != nil {
		d := *s.domain
		dom = &d
	}
	return s.client, dom, s.synced
}

// beginHandover marks a handover in flight; it reports false when one already is, or when an
// earlier one succeeded or failed for good.
func (s *session) beginHandover() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handing || s.synced {
		return false
	}
	s.handing = true
	return true
}

// endHandover records the outcome of a handover: the launcher's answer, or why it failed.
func (s *session) endHandover(st *protocol.DomainStatus, err error, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handing = false
	if err != nil {
		s.handErr, s.handReason = err.Error(), reason
		return
	}
	s.synced, s.handErr, s.handReason = true, "", ""
	if st != nil && (s.domain == nil || s.domain.Phase == protocol.DomainNone) {
		s.domain = st
	}
}

// handoverError is why the last handover failed ("" when it did not).
func (s *session) handoverError() (message, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handErr, s.handReason
}

// stop ends the session and waits for its goroutine.
func (s *session) stop() {
	s.cancel()
	<-s.done
}
