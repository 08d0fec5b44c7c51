// Package migration is the node agent's part in live migrations: the steps on the source's and
// the target's node, the proxy of the migration's sockets, the mutual TLS between node agents
// that carries them from node to node, and KubeVirt's migration metrics.
package migration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// A live migration, as the node agents carry it out (vireo-controller creates the target Pod
// and moves the VMI's phase and node; see controllers/migration):
//
//   - The target's agent (the node of migrationState.targetNode) connects to the target
//     launcher, hands it the VMI with PrepareTarget and, once it is ready, writes
//     migrationState.targetNodeAddress.
//   - The source's agent then proxies the migration sockets of the source launcher's directory
//     to the target launcher's, calls Migrate, and writes the start, the end and the outcome
//     (completed, or failed with the reason and the abort status) as the launcher reports them.
//     migrationState.abortRequested makes it abort the running migration.
//   - The target's agent reports the guest's arrival as it learns of it (completed and
//     targetNodeDomainDetected, before the source's libvirt has stopped its QEMU); the source's
//     agent keeps the proxy until its launcher saw the end. Once the controller made the target
//     the VMI's launcher, the target's agent drives it like any other (and, when the source
//     reported the completion first, sets targetNodeDomainDetected then).

// record is what this agent did for one migration, so each step is taken once.
type record struct {
	// proxy serves the migration sockets in the directory of source Pod proxyPod.
	proxy    *relay.SocketProxy
	proxyPod types.UID
	// targetPod is the target launcher Pod this agent prepared (on the target's node).
	targetPod types.UID
	started   bool // Migrate was called
	// startFailing is when starting the migration first failed (zero: it has not).
	startFailing time.Time
	aborting     bool // AbortMigration was called
	// preparing / prepared / prepareErr track PrepareTarget on the target.
	preparing, prepared bool
	prepareErr          string
	// configuration is the configuration the source's agent started the migration with.
	configuration *v1.MigrationConfiguration
	// progressLabels are the labels of the progress series this agent, the source's, reports.
	progressLabels []string
}

// inFlight reports whether ms describes a migration that has neither completed nor failed.
func inFlight(ms *v1.VirtualMachineInstanceMigrationState) bool {
	return ms != nil && ms.MigrationUID != "" && !ms.Completed && !ms.Failed
}

// Sync takes this node's next steps in the VMI's migration and returns the status to
// write (st with the migration state this agent observed).
func (m *Manager) Sync(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, st v1.VirtualMachineInstanceStatus) v1.VirtualMachineInstanceStatus {
	ms := st.MigrationState
	if ms == nil || ms.MigrationUID == "" {
		return st
	}
	ms = ms.DeepCopy()
	st.MigrationState = ms
	if !inFlight(ms) {
		if !m.stillLeaving(vmi, ms) {
			m.end(ms.MigrationUID)
		}
		m.detectTargetDomain(vmi, ms)
		return st
	}
	if ms.TargetNode == m.node && ms.TargetPod != "" {
		if ms.TargetNodeAddress == "" {
			m.prepareTarget(ctx, key, vmi, ms)
		} else {
			m.reportArrival(vmi, ms)
		}
	}
	if !inFlight(ms) {
		// Arrived (in place, this agent is the source too): nothing left to start or abort.
		return st
	}
	if ms.SourceNode == m.node && vmi.Status.NodeName == m.node && ms.TargetNodeAddress != "" {
		m.runSource(ctx, key, vmi, ms)
	}
	return st
}

// record returns the record of migration uid, creating it.
func (m *Manager) record(uid types.UID) *record {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.records[uid]
	if w == nil {
		w = &record{}
		m.records[uid] = w
	}
	return w
}

// end closes what this agent kept open for migration uid.
func (m *Manager) end(uid types.UID) {
	m.mu.Lock()
	w := m.records[uid]
	delete(m.records, uid)
	var proxy *relay.SocketProxy
	var progress []string
	if w != nil {
		proxy, progress = w.proxy, w.progressLabels
	}
	m.mu.Unlock()
	if proxy != nil {
		proxy.Close()
	}
	if progress != nil {
		forgetMigrationProgress(progress)
	}
}

// EndFrom forgets the migrations of launcher Pod uid (gone), as their source or target, and
// closes their proxies.
func (m *Manager) EndFrom(uid types.UID) {
	m.mu.Lock()
	var ending []types.UID
	for id, w := range m.records {
		if w.proxyPod == uid || w.targetPod == uid {
			ending = append(ending, id)
		}
	}
	m.mu.Unlock()
	for _, id := range ending {
		m.end(id)
	}
}

// EndAll forgets every migration and closes their proxies: the agent is exiting.
func (m *Manager) EndAll() {
	m.mu.Lock()
	ending := make([]types.UID, 0, len(m.records))
	for id := range m.records {
		ending = append(ending, id)
	}
	m.mu.Unlock()
	for _, id := range ending {
		m.end(id)
	}
}

// targetPod is the migration's target launcher Pod on this node, when it runs.
func (m *Manager) targetPod(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) *corev1.Pod {
	pod, err := m.pods.Pods(vmi.Namespace).Get(ms.TargetPod)
	if err != nil || pod.Labels[v1.MigrationJobLabel] != string(ms.MigrationUID) || !metav1.IsControlledBy(pod, vmi) ||
		pod.Spec.NodeName != m.node || pod.Status.Phase != corev1.PodRunning {
		return nil
	}
	return pod
}

// prepareTarget hands the VMI to the target launcher (once, in the background) and records
// its address when the launcher is ready for the guest.
func (m *Manager) prepareTarget(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod := m.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	session := m.sessions.Ensure(pod.UID, vmi.UID, key)
	client, dom, _ := session.State()
	if client == nil || dom == nil {
		return
	}
	if mig := dom.Migration; mig != nil && mig.Phase == protocol.MigrationReady {
		ms.TargetNodeAddress = m.address
		return
	}
	if dom.Phase.Ended() {
		ms.Failed, ms.FailureReason = true, "the target launcher ended before the guest arrived: "+dom.Message
		now := m.now()
		ms.EndTimestamp = &now
		return
	}
	w := m.record(ms.MigrationUID)
	m.mu.Lock()
	// A draining agent (exiting) prepares no new target: the next one does.
	if w.preparing || w.prepared || m.draining.Load() {
		m.mu.Unlock()
		return
	}
	w.preparing, w.targetPod = true, pod.UID
	m.mu.Unlock()
	vmi, uid := vmi.DeepCopy(), ms.MigrationUID
	// PrepareTarget takes seconds (the target's disks, its QEMU): it runs on the session, not
	// in this reconcile, and ends with it.
	session.Go(func(ctx context.Context) {
		began := time.Now()
		err := m.setUpNetwork(ctx, pod.UID, vmi)
		if err == nil {
			_, err = client.PrepareTarget(ctx, &protocol.SyncRequest{VMI: vmi})
		}
		if err == nil {
			klog.FromContext(ctx).Info("Migration target prepared", "vmi", key, "migration", uid,
				"took", time.Since(began).Round(time.Millisecond))
		}
		m.mu.Lock()
		w.preparing, w.prepared = false, err == nil
		if err != nil {
			w.prepareErr = err.Error()
		}
		m.mu.Unlock()
		if err != nil {
			klog.FromContext(ctx).Info("Preparing the migration's target failed; retrying", "vmi", key, "err", err)
			m.queue.EnqueueAfter(key, 5*time.Second)
		}
		m.queue.EnqueueKey(key)
	})
}

// Address is where the source's agent reaches this agent's migration endpoint: address when
// set, else $POD_IP and the port of listen (the agent's HTTPS server), else the node's name.
func Address(address, listen, node string) string {
	if address != "" {
		return address
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil || os.Getenv("POD_IP") == "" {
		return node
	}
	return net.JoinHostPort(os.Getenv("POD_IP"), port)
}

// runSource proxies the migration's sockets, starts the migration and reports it.
func (m *Manager) runSource(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod, err := m.pods.Pods(vmi.Namespace).Get(ms.SourcePod)
	if err != nil || !metav1.IsControlledBy(pod, vmi) || pod.Spec.NodeName != m.node {
		return
	}
	// The launcher's last report counts even once it exited: it exits when its guest left.
	client, dom, _ := m.sessions.Ensure(pod.UID, vmi.UID, key).State()
	if dom != nil && dom.Migration != nil && dom.Migration.UID == string(ms.MigrationUID) {
		m.observeMigration(ms.MigrationUID, vmi, dom.Migration)
		m.reportSource(ctx, client, dom, ms)
		return
	}
	if client == nil || dom == nil {
		return
	}
	w := m.record(ms.MigrationUID)
	switch {
	case w.started:
		return
	case ms.AbortRequested:
		// Aborted before the launcher began: nothing to stop.
		now := m.now()
		ms.Failed, ms.AbortStatus, ms.EndTimestamp = true, v1.MigrationAbortSucceeded, &now
		ms.FailureReason = "Migration aborted before it started"
		return
	case ms.StartTimestamp == nil && m.draining.Load():
		// This agent is exiting: the next one starts it.
		return
	case ms.StartTimestamp == nil:
		// The start is written first (a conditional update): the controller fails a migration
		// that has not started without asking, so it must know before libvirt begins. Once
		// the write went through, startWrittenMigration goes on at once.
		now := m.now()
		ms.StartTimestamp = &now
		return
	}
	m.mu.Lock()
	proxied := w.proxy != nil
	m.mu.Unlock()
	if !proxied {
		dial, err := m.targetDialer(vmi, ms)
		if err == nil {
			err = m.keepProxy(ms.MigrationUID, w, pod.UID, dial)
		}
		if err != nil {
			m.retryStart(ctx, key, w, ms, fmt.Errorf("proxying the migration's sockets: %w", err))
			return
		}
	}
	settings := m.migrationSettings(ms)
	if err := client.Migrate(ctx, migrateRequest(ms, settings)); err != nil {
		m.retryStart(ctx, key, w, ms, fmt.Errorf("starting the migration in the source launcher: %w", err))
		return
	}
	m.mu.Lock()
	w.started, w.configuration = true, configurationOf(settings)
	m.mu.Unlock()
	klog.FromContext(ctx).Info("Migration started", "vmi", key, "migration", ms.MigrationUID, "target", ms.TargetNode+"/"+ms.TargetPod)
}

// StartWritten starts the migration whose start this agent has just written (status,
// written over vmi's): once the write succeeded the controller knows it, so the migration need
// not wait for this agent's cache to bring its own write back. Whatever the start attempt
// changes in the migration state is taken again, and written, by the next pass.
func (m *Manager) StartWritten(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) {
	if !startJustWritten(vmi.Status.MigrationState, status.MigrationState, m.node) || status.NodeName != m.node {
		return
	}
	written := vmi.DeepCopy()
	written.Status = *status.DeepCopy()
	m.runSource(ctx, key, written, written.Status.MigrationState)
}

// startJustWritten reports whether after records the start of an in-flight migration from node
// that before (the state this write replaced) had not started.
func startJustWritten(before, after *v1.VirtualMachineInstanceMigrationState, node string) bool {
	return inFlight(after) && after.SourceNode == node && after.TargetNodeAddress != "" && after.StartTimestamp != nil &&
		!after.AbortRequested && before != nil && before.MigrationUID == after.MigrationUID && before.StartTimestamp == nil
}

// keepProxy starts the proxy of the migration's sockets in source Pod podUID's directory and
// records it in w, unless the migration ended meanwhile (end).
func (m *Manager) keepProxy(uid types.UID, w *record, podUID types.UID, dial relay.Dialer) error {
	proxy, err := relay.StartSocketProxy(m.dirs, podUID, protocol.MigrationSockets, dial)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records[uid] != w {
		proxy.Close()
		return errors.New("the migration ended while its proxy started")
	}
	w.proxy, w.proxyPod = proxy, podUID
	return nil
}

// migrationStartGrace is how long the source's agent retries starting a migration whose start
// it recorded before it fails it: the controller no longer times a migration once started.
const migrationStartGrace = time.Minute

// retryStart retries starting the migration in a few seconds, or fails it once it has not
// started for migrationStartGrace.
func (m *Manager) retryStart(ctx context.Context, key string, w *record, ms *v1.VirtualMachineInstanceMigrationState, err error) {
	now := m.now()
	m.mu.Lock()
	if w.startFailing.IsZero() {
		w.startFailing = now.Time
	}
	failing := now.Sub(w.startFailing)
	m.mu.Unlock()
	if failing >= migrationStartGrace {
		m.failStart(ms, fmt.Errorf("%w (retried for %s)", err, failing.Round(time.Second)))
		return
	}
	klog.FromContext(ctx).Error(err, "Cannot start the migration; retrying", "vmi", key, "failingFor", failing.Round(time.Second))
	m.queue.EnqueueAfter(key, 5*time.Second)
}

// failStart fails a migration that could not start: the guest stays where it is.
func (m *Manager) failStart(ms *v1.VirtualMachineInstanceMigrationState, err error) {
	now := m.now()
	ms.Failed, ms.EndTimestamp, ms.FailureReason = true, &now, "Migration could not start: "+err.Error()
	if ms.AbortRequested {
		ms.AbortStatus = v1.MigrationAbortSucceeded
	}
}

// targetDialer connects to the target launcher's migration sockets: directly when it runs on
// this node (a migration in place), else through the target node's agent over mutual TLS.
func (m *Manager) targetDialer(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) (relay.Dialer, error) {
	if ms.TargetNode != m.node {
		address, uid := ms.TargetNodeAddress, string(ms.MigrationUID)
		return func(ctx context.Context, name string) (net.Conn, error) {
			return m.peers.dialPeer(ctx, address, uid, name)
		}, nil
	}
	pod := m.targetPod(vmi, ms)
	if pod == nil {
		return nil, errors.New("the target launcher Pod " + ms.TargetPod + " does not run on this node")
	}
	return func(ctx context.Context, name string) (net.Conn, error) { return m.dirs.DialSocket(ctx, pod.UID, name) }, nil
}

// migrationSettings are the cluster's migration settings now, overridden by the configuration
// the controller recorded in ms from the migration's policy (nil: the agent has no settings).
func (m *Manager) migrationSettings(ms *v1.VirtualMachineInstanceMigrationState) *defaults.MigrationSettings {
	if m.settings == nil {
		return nil
	}
	s := m.settings.Get().Migrations
	if ms.MigrationConfiguration != nil {
		s.Apply(ms.MigrationConfiguration)
	}
	return &s
}

// migrateRequest turns the cluster's migration settings m into the launcher's request.
func migrateRequest(ms *v1.VirtualMachineInstanceMigrationState, m *defaults.MigrationSettings) *protocol.MigrateRequest {
	req := &protocol.MigrateRequest{MigrationUID: string(ms.MigrationUID)}
	if m == nil {
		return req
	}
	if b := m.BandwidthPerMigration.Value(); b > 0 {
		req.BandwidthMiB = uint64(max(1, b>>20))
	}
	req.ProgressTimeout = secondsDuration(m.ProgressTimeout)
	req.CompletionTimeoutPerGiB = secondsDuration(m.CompletionTimeoutPerGiB)
	req.AllowAutoConverge, req.AllowPostCopy = m.AllowAutoConverge, m.PostCopy()
	return req
}

// configurationOf is the migration settings m as KubeVirt reports them in a migration's state
// (nil without settings).
func configurationOf(m *defaults.MigrationSettings) *v1.MigrationConfiguration {
	if m == nil {
		return nil
	}
	return m.Configuration()
}

// secondsDuration is s seconds, saturating: a timeout of centuries is a long one, not (past
// time.Duration's 292 years) a negative one that would turn the limit off.
func secondsDuration(s int64) time.Duration {
	if s > int64(math.MaxInt64/time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s) * time.Second
}

// reportSource copies the source launcher's view of the migration into ms and asks the
// launcher to abort when the controller says so.
func (m *Manager) reportSource(ctx context.Context, client *protocol.Client, dom *protocol.DomainStatus, ms *v1.VirtualMachineInstanceMigrationState) {
	mig := dom.Migration
	if mig.Mode != "" {
		ms.Mode = v1.MigrationMode(mig.Mode)
	}
	if ms.MigrationConfiguration == nil {
		ms.MigrationConfiguration = m.startedConfiguration(ms.MigrationUID)
	}
	if c := ms.MigrationConfiguration; mig.PostCopyUnavailable != "" && c != nil && (c.AllowPostCopy == nil || *c.AllowPostCopy) {
		c.AllowPostCopy = ptr.To(false)
		klog.FromContext(ctx).Info("The migration runs without post-copy: the target's QEMU refused it", "migration", ms.MigrationUID, "reason", mig.PostCopyUnavailable)
	}
	if mig.Ended() {
		end := metav1.Now()
		if mig.End != nil {
			end = metav1.NewTime(*mig.End)
		}
		ms.EndTimestamp = &end
		switch {
		case mig.Phase == protocol.MigrationCompleted:
			ms.Completed = true
			if ms.AbortRequested {
				ms.AbortStatus = v1.MigrationAbortFailed
			}
		default:
			// The guest stayed on the source: what an abort asks for, whatever ended the
			// migration first (else its status would stay Aborting).
			ms.Failed, ms.FailureReason = true, mig.Failure
			if ms.AbortRequested {
				ms.AbortStatus = v1.MigrationAbortSucceeded
			}
		}
		return
	}
	if ms.AbortRequested && !mig.AbortRequested && client != nil {
		w := m.record(ms.MigrationUID)
		if !w.aborting {
			if err := client.AbortMigration(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Aborting the migration", "migration", ms.MigrationUID)
				return
			}
			w.aborting = true
		}
	}
}

// startedConfiguration is a copy of the configuration this agent started migration uid with
// (nil: it did not, or not since it started).
func (m *Manager) startedConfiguration(uid types.UID) *v1.MigrationConfiguration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.records[uid]; w != nil && w.configuration != nil {
		return w.configuration.DeepCopy()
	}
	return nil
}

// reportArrival completes the migration once the target launcher on this node reports the
// guest arrived: libvirt finished the incoming job (its statistics are there) and the guest
// runs here. This is the first sign of success; the source's libvirt confirms it only after it
// stopped its QEMU (at least 200 ms later), and its report then changes nothing.
func (m *Manager) reportArrival(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod := m.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	dom := m.sessions.Status(pod.UID)
	if dom == nil || dom.Migration == nil || dom.Migration.Phase != protocol.MigrationCompleted || dom.Migration.ElapsedMs == 0 ||
		(dom.Phase != protocol.DomainRunning && dom.Phase != protocol.DomainPaused) {
		return
	}
	end := metav1.Now()
	if dom.Migration.End != nil {
		end = metav1.NewTime(*dom.Migration.End)
	}
	ms.Completed, ms.TargetNodeDomainDetected, ms.EndTimestamp = true, true, &end
	if ms.AbortRequested {
		ms.AbortStatus = v1.MigrationAbortFailed
	}
}

// stillLeaving reports whether ms's source launcher on this node has not reported the
// migration's end yet, though the target reported the guest's arrival: the proxy carries
// libvirt's last replies to the source until then (it closes with the source Pod otherwise).
func (m *Manager) stillLeaving(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) bool {
	if !ms.Completed || ms.SourceNode != m.node {
		return false
	}
	pod, err := m.pods.Pods(vmi.Namespace).Get(ms.SourcePod)
	if err != nil || pod.Spec.NodeName != m.node {
		return false
	}
	dom := m.sessions.Status(pod.UID)
	return dom != nil && !dom.Phase.Ended() && dom.Migration != nil && dom.Migration.UID == string(ms.MigrationUID) && !dom.Migration.Ended()
}

// detectTargetDomain sets targetNodeDomainDetected once the VMI runs in its migration's target
// launcher on this node.
func (m *Manager) detectTargetDomain(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	if !ms.Completed || ms.Failed || ms.TargetNodeDomainDetected || ms.TargetNode != m.node || vmi.Status.NodeName != m.node {
		return
	}
	pod := m.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	if dom := m.sessions.Status(pod.UID); dom != nil && (dom.Phase == protocol.DomainRunning || dom.Phase == protocol.DomainPaused) {
		ms.TargetNodeDomainDetected = true
	}
}
