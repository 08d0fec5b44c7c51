// Package launchersession is the node agent's connections to the launchers on its node: one
// session per launcher Pod, which connects to the launcher's command socket (retrying while
// the launcher starts), follows its domain events, remembers the last one, and reconnects when
// the stream breaks, until stopped. Calls that outlive the reconcile that starts them (handing
// a VMI over, preparing a migration's target) run on the session (Go) and end with it.
package launchersession

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// Notify is called on every domain event of the launcher serving VMI vmiKey (namespace/name)
// with the previous status (nil for a session's first) and the new one.
type Notify func(vmiKey string, prev, st *protocol.DomainStatus)

// Session is the connection to one launcher.
type Session struct {
	podUID types.UID
	vmiUID types.UID
	cancel context.CancelFunc
	ctx    context.Context // the session's lifetime: Go's calls end with it
	wg     sync.WaitGroup

	mu     sync.Mutex
	client *protocol.Client
	domain *protocol.DomainStatus
	synced bool
	// handing: a handover (Sync) is in flight; handErr and handReason say why the last one
	// failed ("" after success).
	handing             bool
	handErr, handReason string
}

// start connects to the launcher of Pod podUID, which must serve the VMI vmiUID (vmiKey).
func start(dirs nodedirs.Dirs, podUID, vmiUID types.UID, vmiKey string, notify Notify) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{podUID: podUID, vmiUID: vmiUID, cancel: cancel, ctx: ctx}
	s.Go(func(ctx context.Context) {
		s.run(ctx, dirs, func(prev, st *protocol.DomainStatus) { notify(vmiKey, prev, st) })
	})
	return s
}

func (s *Session) run(ctx context.Context, dirs nodedirs.Dirs, notify func(prev, st *protocol.DomainStatus)) {
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
func (s *Session) follow(ctx context.Context, dirs nodedirs.Dirs, notify func(prev, st *protocol.DomainStatus)) error {
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	client, err := protocol.Dial(dialCtx, dirs.DialLauncher(s.podUID))
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
		notify(s.Record(st), st)
	}
}

// Record takes st as the launcher's last report and returns the one before (nil: none).
func (s *Session) Record(st *protocol.DomainStatus) (prev *protocol.DomainStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, s.domain = s.domain, st
	return prev
}

// State returns the connected client (nil when not connected), the last domain status (nil
// before the first event) and whether the VMI was handed over in this session.
func (s *Session) State() (*protocol.Client, *protocol.DomainStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dom *protocol.DomainStatus
	if s.domain != nil {
		d := *s.domain
		dom = &d
	}
	return s.client, dom, s.synced
}

// BeginHandover marks a handover in flight; it reports false when one already is, or when an
// earlier one succeeded.
func (s *Session) BeginHandover() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handing || s.synced {
		return false
	}
	s.handing = true
	return true
}

// EndHandover records the outcome of a handover: the launcher's answer, or why it failed.
func (s *Session) EndHandover(st *protocol.DomainStatus, err error, reason string) {
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

// HandoverError is why the last handover failed ("" when it did not).
func (s *Session) HandoverError() (message, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handErr, s.handReason
}

// Go runs f in its own goroutine with the session's context, which ends when the session
// stops; Stop waits for f. A stopped session runs nothing.
func (s *Session) Go(f func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// Stop ends the session and waits for its goroutines.
func (s *Session) Stop() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}
