package nodeagent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/internal/reconcile"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/launchersession"
)

// sync brings one VMI of this node forward: it connects to its launcher, hands the VMI over,
// shuts the guest down when the VMI is deleted, writes the status it observes, and ends the
// VMI's stream sessions once it no longer runs here.
func (a *Agent) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := a.vmis.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		if incoming, ierr := a.targetVMIs.VirtualMachineInstances(ns).Get(name); ierr == nil && incoming.Status.NodeName != a.opts.NodeName {
			return a.syncIncoming(ctx, key, incoming)
		}
		a.written.Forget(key)
		a.endStreamsOfGone(ns, name)
		return nil
	}
	if err != nil {
		return err
	}
	if a.written.Stale(key, vmi.ResourceVersion) {
		// The cache has not seen this agent's last write yet; its update requeues the VMI.
		return nil
	}
	if vmi.Status.Phase != v1.Running {
		a.streams.EndVMI(ns, name, nodeagentapi.CloseVMIStopped)
	}
	if vmi.Status.Phase != v1.Scheduled && vmi.Status.Phase != v1.Running {
		return nil
	}
	pod, err := a.confirmedLauncherPod(ctx, vmi)
	if err != nil {
		return err
	}
	obs := observation{pod: pod}
	if pod != nil && !launcherEnded(pod) {
		s := a.sessions.Ensure(pod.UID, vmi.UID, key)
		client, dom, synced := s.State()
		obs.domain = dom
		if client != nil && dom != nil {
			if err := a.drive(ctx, key, vmi, pod, s, client, dom, synced); err != nil {
				return err
			}
			_, obs.domain, _ = s.State()
		}
		obs.syncErr, obs.syncReason = s.HandoverError()
	} else if pod != nil {
		// The launcher ended: its last report is still the best evidence of how.
		obs.domain = a.sessions.Status(pod.UID)
	}
	obs.podDeleted = a.podDeletedUnderVMI(ctx, vmi, obs)
	status := a.migrations.Sync(ctx, key, vmi, nextStatus(vmi, obs, a.now()))
	wrote, err := a.writeStatus(ctx, vmi, status)
	if wrote {
		a.migrations.StartWritten(ctx, key, vmi, status)
	}
	return err
}

// syncIncoming takes this node's steps for a VMI of another node migrating to this one: it
// prepares the target launcher and writes only the migration state.
func (a *Agent) syncIncoming(ctx context.Context, key string, vmi *v1.VirtualMachineInstance) error {
	if a.written.Stale(key, vmi.ResourceVersion) {
		return nil
	}
	_, err := a.writeStatus(ctx, vmi, a.migrations.Sync(ctx, key, vmi, *vmi.Status.DeepCopy()))
	return err
}

// podDeletedUnderVMI asks the API, once a guest has ended while its VMI was not deleted, whether
// its launcher Pod is being deleted: the launcher's report can overtake the Pod's deletion in this
// agent's cache, and the VMI's reason (LauncherPodDeleted) depends on it.
func (a *Agent) podDeletedUnderVMI(ctx context.Context, vmi *v1.VirtualMachineInstance, obs observation) bool {
	if obs.domain == nil || !obs.domain.Phase.Ended() || vmi.DeletionTimestamp != nil || obs.pod == nil || obs.pod.DeletionTimestamp != nil {
		return false
	}
	pod, err := a.kube.CoreV1().Pods(obs.pod.Namespace).Get(ctx, obs.pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true
	case err != nil:
		return false
	}
	return pod.UID == obs.pod.UID && pod.DeletionTimestamp != nil
}

// drive sends the launcher what it needs next: the VMI when it has no domain yet, and a
// shutdown (then a destroy at the deadline) when the VMI is being deleted. The handover (pulling
// containerDisks, then the launcher preparing disks and starting QEMU: seconds) runs on its own,
// on the launcher's session, so a worker is never held by one VMI's start.
func (a *Agent) drive(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod, s *launchersession.Session,
	client *protocol.Client, dom *protocol.DomainStatus, synced bool) error {
	if vmi.DeletionTimestamp != nil {
		if dom.Phase.Ended() {
			return nil
		}
		return a.shutdown(ctx, key, vmi, pod, client)
	}
	if synced || dom.Phase != protocol.DomainNone || pod.DeletionTimestamp != nil || !s.BeginHandover() {
		return nil
	}
	vmi = vmi.DeepCopy()
	s.Go(func(ctx context.Context) {
		st, reason, err := a.handOver(ctx, pod.UID, vmi, client)
		s.EndHandover(st, err, reason)
		if err != nil {
			klog.FromContext(ctx).Info("Could not hand the VMI to its launcher; retrying", "vmi", key, "err", err)
			a.EnqueueAfter(key, 5*time.Second)
		}
		a.EnqueueKey(key)
	})
	return nil
}

// handOver sets up the launcher Pod's network, then sends the launcher the VMI.
func (a *Agent) handOver(ctx context.Context, podUID types.UID, vmi *v1.VirtualMachineInstance, client *protocol.Client) (*protocol.DomainStatus, string, error) {
	if err := a.network.SetUp(ctx, podUID, vmi); err != nil {
		return nil, v1.ReasonSyncFailed, err
	}
	st, err := client.Sync(ctx, &protocol.SyncRequest{VMI: vmi})
	if err != nil {
		return nil, v1.ReasonSyncFailed, err
	}
	return st, "", nil
}

// shutdown presses the guest's power button once and destroys it when the VMI's grace period
// has passed. The deadline is kept in the agent's own directory, so a restarted agent keeps it.
// A grace period lowered during the shutdown (a forced stop) brings the deadline forward: the
// guest gets at most that long from then.
func (a *Agent) shutdown(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, pod *corev1.Pod, client *protocol.Client) error {
	now := a.now().Time
	grace := v1.DefaultGracePeriodSeconds
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	byGrace := now.Add(time.Duration(grace) * time.Second)
	deadline, ok := a.dirs.Deadline(pod.UID)
	if ok && byGrace.Before(deadline) {
		klog.FromContext(ctx).Info("Grace period lowered; destroying the guest earlier", "vmi", key, "deadline", byGrace.Format(time.RFC3339))
		deadline = byGrace
		if err := a.dirs.SetDeadline(pod.UID, deadline); err != nil {
			return err
		}
	}
	if !ok {
		deadline = byGrace
		if err := a.dirs.SetDeadline(pod.UID, deadline); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Shutting the guest down", "vmi", key, "deadline", deadline.Format(time.RFC3339))
		if err := client.Shutdown(ctx); err != nil {
			return fmt.Errorf("asking the launcher to shut the guest down: %w", err)
		}
	}
	if now.Before(deadline) {
		a.EnqueueAfter(key, deadline.Sub(now))
		return nil
	}
	klog.FromContext(ctx).Info("Grace period over; destroying the guest", "vmi", key)
	return client.Stop(ctx)
}

// writeStatus writes status through /status when it differs from the VMI's; wrote says whether it did.
func (a *Agent) writeStatus(ctx context.Context, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) (wrote bool, err error) {
	return reconcile.WriteVMIStatus(ctx, a.client, &a.written, vmi, status)
}
