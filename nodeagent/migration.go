package nodeagent

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

// migrationKey names one migration on this node: the migration's UID.
type migrationKey = types.UID

// migrationWork is what this agent did for one migration, so each step is taken once.
type migrationWork struct {
	// proxy serves the migration sockets in the directory of source Pod proxyPod.
	proxy    *socketProxy
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

// syncMigration takes this node's next steps in the VMI's migration and returns the status to
// write (st with the migration state this agent observed).
func (a *Agent) syncMigration(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, st v1.VirtualMachineInstanceStatus) v1.VirtualMachineInstanceStatus {
	ms := st.MigrationState
	if ms == nil || ms.MigrationUID == "" {
		return st
	}
	ms = ms.DeepCopy()
	st.MigrationState = ms
	if !inFlight(ms) {
		if !a.stillLeaving(vmi, ms) {
			a.endMigration(ms.MigrationUID)
		}
		a.detectTargetDomain(vmi, ms)
		return st
	}
	if ms.TargetNode == a.opts.NodeName && ms.TargetPod != "" {
		if ms.TargetNodeAddress == "" {
			a.prepareTarget(ctx, key, vmi, ms)
		} else {
			a.reportArrival(vmi, ms)
		}
	}
	if !inFlight(ms) {
		// Arrived (in place, this agent is the source too): nothing left to start or abort.
		return st
	}
	if ms.SourceNode == a.opts.NodeName && vmi.Status.NodeName == a.opts.NodeName && ms.TargetNodeAddress != "" {
		a.runSource(ctx, key, vmi, ms)
	}
	return st
}

// work returns the record of migration uid, creating it.
func (a *Agent) work(uid migrationKey) *migrationWork {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.migrations[uid]
	if w == nil {
		w = &migrationWork{}
		a.migrations[uid] = w
	}
	return w
}

// endMigration closes what this agent kept open for migration uid.
func (a *Agent) endMigration(uid migrationKey) {
	a.mu.Lock()
	w := a.migrations[uid]
	delete(a.migrations, uid)
	var proxy *socketProxy
	var progress []string
	if w != nil {
		proxy, progress = w.proxy, w.progressLabels
	}
	a.mu.Unlock()
	if proxy != nil {
		proxy.close()
	}
	if progress != nil {
		forgetMigrationProgress(progress)
	}
}

// endMigrationsFrom forgets the migrations of launcher Pod uid (gone), as their source or
// target, and closes their proxies.
func (a *Agent) endMigrationsFrom(uid types.UID) {
	a.mu.Lock()
	var ending []types.UID
	for m, w := range a.migrations {
		if w.proxyPod == uid || w.targetPod == uid {
			ending = append(ending, m)
		}
	}
	a.mu.Unlock()
	for _, m := range ending {
		a.endMigration(m)
	}
}

// targetPod is the migration's target launcher Pod on this node, when it runs.
func (a *Agent) targetPod(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) *corev1.Pod {
	pod, err := a.pods.Pods(vmi.Namespace).Get(ms.TargetPod)
	if err != nil || pod.Labels[v1.MigrationJobLabel] != string(ms.MigrationUID) || !metav1.IsControlledBy(pod, vmi) ||
		pod.Spec.NodeName != a.opts.NodeName || pod.Status.Phase != corev1.PodRunning {
		return nil
	}
	return pod
}

// prepareTarget hands the VMI to the target launcher (once, in the background) and records
// its address when the launcher is ready for the guest.
func (a *Agent) prepareTarget(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod := a.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	client, dom, _ := a.session(pod, vmi, key).state()
	if client == nil || dom == nil {
		return
	}
	if m := dom.Migration; m != nil && m.Phase == protocol.MigrationReady {
		ms.TargetNodeAddress = a.migrationAddress()
		return
	}
	if dom.Phase.Ended() {
		ms.Failed, ms.FailureReason = true, "the target launcher ended before the guest arrived: "+dom.Message
		now := a.now()
		ms.EndTimestamp = &now
		return
	}
	w := a.work(ms.MigrationUID)
	a.mu.Lock()
	if w.preparing || w.prepared {
		a.mu.Unlock()
		return
	}
	w.preparing, w.targetPod = true, pod.UID
	a.mu.Unlock()
	vmi = vmi.DeepCopy()
	go func() {
		began := time.Now()
		_, err := client.PrepareTarget(a.ctx, &protocol.SyncRequest{VMI: vmi})
		if err == nil {
			klog.FromContext(a.ctx).Info("Migration target prepared", "vmi", key, "migration", ms.MigrationUID,
				"took", time.Since(began).Round(time.Millisecond))
		}
		a.mu.Lock()
		w.preparing, w.prepared = false, err == nil
		if err != nil {
			w.prepareErr = err.Error()
		}
		a.mu.Unlock()
		if err != nil {
			klog.FromContext(a.ctx).Info("Preparing the migration's target failed; retrying", "vmi", key, "err", err)
			a.EnqueueAfter(key, 5*time.Second)
		}
		a.EnqueueKey(key)
	}()
}

// migrationAddress is where the source's agent reaches this agent's migration endpoint.
func (a *Agent) migrationAddress() string {
	if a.opts.MigrationAddress != "" {
		return a.opts.MigrationAddress
	}
	_, port, err := net.SplitHostPort(a.opts.Listen)
	if err != nil || os.Getenv("POD_IP") == "" {
		return a.opts.NodeName
	}
	return net.JoinHostPort(os.Getenv("POD_IP"), port)
}

// runSource proxies the migration's sockets, starts the migration and reports it.
func (a *Agent) runSource(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod, err := a.pods.Pods(vmi.Namespace).Get(ms.SourcePod)
	if err != nil || !metav1.IsControlledBy(pod, vmi) || pod.Spec.NodeName != a.opts.NodeName {
		return
	}
	// The launcher's last report counts even once it exited: it exits when its guest left.
	client, dom, _ := a.session(pod, vmi, key).state()
	if dom != nil && dom.Migration != nil && dom.Migration.UID == string(ms.MigrationUID) {
		a.observeMigration(ms.MigrationUID, vmi, dom.Migration)
		a.reportSource(ctx, client, dom, ms)
		return
	}
	if client == nil || dom == nil {
		return
	}
	w := a.work(ms.MigrationUID)
	switch {
	case w.started:
		return
	case ms.AbortRequested:
		// Aborted before the launcher began: nothing to stop.
		now := a.now()
		ms.Failed, ms.AbortStatus, ms.EndTimestamp = true, v1.MigrationAbortSucceeded, &now
		ms.FailureReason = "Migration aborted before it started"
		return
	case ms.StartTimestamp == nil:
		// The start is written first (a conditional update): the controller fails a migration
		// that has not started without asking, so it must know before libvirt begins. Once
		// the write went through, startWrittenMigration goes on at once.
		now := a.now()
		ms.StartTimestamp = &now
		return
	}
	a.mu.Lock()
	proxied := w.proxy != nil
	a.mu.Unlock()
	if !proxied {
		dial, err := a.targetDialer(vmi, ms)
		if err == nil {
			err = a.keepProxy(ms.MigrationUID, w, pod.UID, dial)
		}
		if err != nil {
			a.retryStart(ctx, key, w, ms, fmt.Errorf("proxying the migration's sockets: %w", err))
			return
		}
	}
	settings := a.migrationSettings()
	if err := client.Migrate(ctx, migrateRequest(ms, settings)); err != nil {
		a.retryStart(ctx, key, w, ms, fmt.Errorf("starting the migration in the source launcher: %w", err))
		return
	}
	a.mu.Lock()
	w.started, w.configuration = true, migrationConfiguration(settings)
	a.mu.Unlock()
	klog.FromContext(ctx).Info("Migration started", "vmi", key, "migration", ms.MigrationUID, "target", ms.TargetNode+"/"+ms.TargetPod)
}

// startWrittenMigration starts the migration whose start this agent has just written (status,
// written over vmi's): once the write succeeded the controller knows it, so the migration need
// not wait for this agent's cache to bring its own write back. Whatever the start attempt
// changes in the migration state is taken again, and written, by the next pass.
func (a *Agent) startWrittenMigration(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) {
	if !startJustWritten(vmi.Status.MigrationState, status.MigrationState, a.opts.NodeName) || status.NodeName != a.opts.NodeName {
		return
	}
	written := vmi.DeepCopy()
	written.Status = *status.DeepCopy()
	a.runSource(ctx, key, written, written.Status.MigrationState)
}

// startJustWritten reports whether after records the start of an in-flight migration from node
// that before (the state this write replaced) had not started.
func startJustWritten(before, after *v1.VirtualMachineInstanceMigrationState, node string) bool {
	return inFlight(after) && after.SourceNode == node && after.TargetNodeAddress != "" && after.StartTimestamp != nil &&
		!after.AbortRequested && before != nil && before.MigrationUID == after.MigrationUID && before.StartTimestamp == nil
}

// keepProxy starts the proxy of the migration's sockets in source Pod podUID's directory and
// records it in w, unless the migration ended meanwhile (endMigration, from an informer).
func (a *Agent) keepProxy(uid migrationKey, w *migrationWork, podUID types.UID, dial func(context.Context, string) (net.Conn, error)) error {
	proxy, err := a.dirs.startSocketProxy(podUID, protocol.MigrationSockets, dial)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.migrations[uid] != w {
		proxy.close()
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
func (a *Agent) retryStart(ctx context.Context, key string, w *migrationWork, ms *v1.VirtualMachineInstanceMigrationState, err error) {
	now := a.now()
	a.mu.Lock()
	if w.startFailing.IsZero() {
		w.startFailing = now.Time
	}
	failing := now.Sub(w.startFailing)
	a.mu.Unlock()
	if failing >= migrationStartGrace {
		a.failStart(ms, fmt.Errorf("%w (retried for %s)", err, failing.Round(time.Second)))
		return
	}
	klog.FromContext(ctx).Error(err, "Cannot start the migration; retrying", "vmi", key, "failingFor", failing.Round(time.Second))
	a.EnqueueAfter(key, 5*time.Second)
}

// failStart fails a migration that could not start: the guest stays where it is.
func (a *Agent) failStart(ms *v1.VirtualMachineInstanceMigrationState, err error) {
	now := a.now()
	ms.Failed, ms.EndTimestamp, ms.FailureReason = true, &now, "Migration could not start: "+err.Error()
	if ms.AbortRequested {
		ms.AbortStatus = v1.MigrationAbortSucceeded
	}
}

// targetDialer connects to the target launcher's migration sockets: directly when it runs on
// this node (a migration in place), else through the target node's agent over mutual TLS.
func (a *Agent) targetDialer(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) (func(context.Context, string) (net.Conn, error), error) {
	if ms.TargetNode != a.opts.NodeName {
		address, uid := ms.TargetNodeAddress, string(ms.MigrationUID)
		return func(ctx context.Context, name string) (net.Conn, error) {
			return a.peers.dialPeer(ctx, address, uid, name)
		}, nil
	}
	pod := a.targetPod(vmi, ms)
	if pod == nil {
		return nil, errors.New("the target launcher Pod " + ms.TargetPod + " does not run on this node")
	}
	return func(ctx context.Context, name string) (net.Conn, error) { return a.dirs.dialSocket(ctx, pod.UID, name) }, nil
}

// migrationSettings are the cluster's migration settings now (nil: the agent has none).
func (a *Agent) migrationSettings() *defaults.MigrationSettings {
	if a.settings == nil {
		return nil
	}
	m := a.settings.Get().Migrations
	return &m
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
	req.AllowAutoConverge, req.AllowPostCopy = m.AllowAutoConverge, m.AllowPostCopy
	return req
}

// migrationConfiguration is the cluster's migration settings m as KubeVirt reports them in a
// migration's state (nil without settings).
func migrationConfiguration(m *defaults.MigrationSettings) *v1.MigrationConfiguration {
	if m == nil {
		return nil
	}
	return &v1.MigrationConfiguration{
		ParallelMigrationsPerCluster:      ptr.To(m.ParallelMigrationsPerCluster),
		ParallelOutboundMigrationsPerNode: ptr.To(m.ParallelOutboundMigrationsPerNode),
		BandwidthPerMigration:             ptr.To(m.BandwidthPerMigration.DeepCopy()),
		CompletionTimeoutPerGiB:           ptr.To(m.CompletionTimeoutPerGiB),
		ProgressTimeout:                   ptr.To(m.ProgressTimeout),
		AllowAutoConverge:                 ptr.To(m.AllowAutoConverge),
		AllowPostCopy:                     ptr.To(m.AllowPostCopy),
	}
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
func (a *Agent) reportSource(ctx context.Context, client *protocol.Client, dom *protocol.DomainStatus, ms *v1.VirtualMachineInstanceMigrationState) {
	m := dom.Migration
	if m.Mode != "" {
		ms.Mode = v1.MigrationMode(m.Mode)
	}
	if ms.MigrationConfiguration == nil {
		ms.MigrationConfiguration = a.startedConfiguration(ms.MigrationUID)
	}
	if c := ms.MigrationConfiguration; m.PostCopyUnavailable != "" && c != nil && (c.AllowPostCopy == nil || *c.AllowPostCopy) {
		c.AllowPostCopy = ptr.To(false)
		klog.FromContext(ctx).Info("The migration runs without post-copy: the target's QEMU refused it", "migration", ms.MigrationUID, "reason", m.PostCopyUnavailable)
	}
	if m.Ended() {
		end := metav1.Now()
		if m.End != nil {
			end = metav1.NewTime(*m.End)
		}
		ms.EndTimestamp = &end
		switch {
		case m.Phase == protocol.MigrationCompleted:
			ms.Completed = true
			if ms.AbortRequested {
				ms.AbortStatus = v1.MigrationAbortFailed
			}
		default:
			// The guest stayed on the source: what an abort asks for, whatever ended the
			// migration first (else its status would stay Aborting).
			ms.Failed, ms.FailureReason = true, m.Failure
			if ms.AbortRequested {
				ms.AbortStatus = v1.MigrationAbortSucceeded
			}
		}
		return
	}
	if ms.AbortRequested && !m.AbortRequested && client != nil {
		w := a.work(ms.MigrationUID)
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
func (a *Agent) startedConfiguration(uid migrationKey) *v1.MigrationConfiguration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.migrations[uid]; w != nil && w.configuration != nil {
		return w.configuration.DeepCopy()
	}
	return nil
}

// launcherStatus is the last status the launcher of Pod uid reported (nil: no session or none yet).
func (a *Agent) launcherStatus(uid types.UID) *protocol.DomainStatus {
	a.mu.Lock()
	s := a.sessions[uid]
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	_, dom, _ := s.state()
	return dom
}

// reportArrival completes the migration once the target launcher on this node reports the
// guest arrived: libvirt finished the incoming job (its statistics are there) and the guest
// runs here. This is the first sign of success; the source's libvirt confirms it only after it
// stopped its QEMU (at least 200 ms later), and its report then changes nothing.
func (a *Agent) reportArrival(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	pod := a.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	dom := a.launcherStatus(pod.UID)
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
func (a *Agent) stillLeaving(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) bool {
	if !ms.Completed || ms.SourceNode != a.opts.NodeName {
		return false
	}
	pod, err := a.pods.Pods(vmi.Namespace).Get(ms.SourcePod)
	if err != nil || pod.Spec.NodeName != a.opts.NodeName {
		return false
	}
	dom := a.launcherStatus(pod.UID)
	return dom != nil && !dom.Phase.Ended() && dom.Migration != nil && dom.Migration.UID == string(ms.MigrationUID) && !dom.Migration.Ended()
}

// detectTargetDomain sets targetNodeDomainDetected once the VMI runs in its migration's target
// launcher on this node.
func (a *Agent) detectTargetDomain(vmi *v1.VirtualMachineInstance, ms *v1.VirtualMachineInstanceMigrationState) {
	if !ms.Completed || ms.Failed || ms.TargetNodeDomainDetected || ms.TargetNode != a.opts.NodeName || vmi.Status.NodeName != a.opts.NodeName {
		return
	}
	pod := a.targetPod(vmi, ms)
	if pod == nil {
		return
	}
	if dom := a.launcherStatus(pod.UID); dom != nil && (dom.Phase == protocol.DomainRunning || dom.Phase == protocol.DomainPaused) {
		ms.TargetNodeDomainDetected = true
	}
}
