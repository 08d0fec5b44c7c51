package nodeagent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// syncPod prepares what a Pod on this node needs of the agent: a launcher's capabilities seed,
// a clone source's relay. Once a Pod is gone, or was replaced by another of its name, every Pod
// the agent keeps something for that is no longer on the node is forgotten (forgetGone): a
// sweep rather than the one UID, since the VMI queue may have started a session with a Pod
// that went before this queue first saw it.
func (a *Agent) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := a.podList.Pods(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	a.mu.Lock()
	known := a.podUIDs[key]
	if pod != nil {
		a.podUIDs[key] = pod.UID
	} else {
		delete(a.podUIDs, key)
	}
	a.mu.Unlock()
	if pod == nil || known != "" && pod.UID != known {
		a.forgetGone(ctx)
	}
	if pod == nil {
		return nil
	}
	switch pod.Labels[v1.AppLabel] {
	case v1.CloneSourceApp:
		a.uploads.SyncCloneSource(pod)
	case v1.LauncherApp:
		if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			a.seed(ctx, key, pod)
		}
	}
	return nil
}

// seedState is how far the copy of the capabilities seed into one launcher Pod went.
type seedState struct {
	began time.Time
	done  bool // copied, or given up
}

// seed copies the node's QEMU capabilities into launcher Pod pod's emptyDir as soon as the
// kubelet has created it, which is before the launcher starts: its libvirtd then need not
// probe QEMU (2-3 s). Until the emptyDir is there the Pod is looked at again (seedPollAfter);
// one copy per Pod; a failure is logged (the launcher probes itself).
func (a *Agent) seed(ctx context.Context, key string, pod *corev1.Pod) {
	if a.opts.CapabilitiesDir == "" {
		return
	}
	a.mu.Lock()
	st := a.seeds[pod.UID]
	if st == nil {
		st = &seedState{began: time.Now()}
		a.seeds[pod.UID] = st
	}
	done := st.done
	a.mu.Unlock()
	elapsed := time.Since(st.began)
	if done {
		return
	}
	copied, err := a.dirs.SeedLauncher(pod.UID, a.opts.CapabilitiesDir)
	switch {
	case err != nil:
		klog.FromContext(ctx).Error(err, "Copying the capabilities seed into the launcher Pod", "pod", klog.KObj(pod))
	case !copied && elapsed < seedWait:
		a.pods.EnqueueAfter(key, seedPollAfter(elapsed))
		return
	case !copied:
		klog.FromContext(ctx).Info("The launcher Pod's emptyDir did not appear; its launcher probes QEMU itself", "pod", klog.KObj(pod))
	}
	a.mu.Lock()
	st.done = true
	a.mu.Unlock()
}

// seedWait bounds how long the agent waits for a launcher Pod's emptyDir (the kubelet creates
// it once the Pod's image volumes are pulled).
const seedWait = 5 * time.Minute

// seedPollAfter is how often the agent looks for the emptyDir, elapsed into the wait: often
// while the kubelet is about to create it, rarely once an image pull is taking long.
func seedPollAfter(elapsed time.Duration) time.Duration {
	if elapsed < 10*time.Second {
		return 20 * time.Millisecond
	}
	return time.Second
}

// forgetPod forgets Pod uid: a launcher's session, migrations, seed and shutdown deadline, a
// clone source's relay.
func (a *Agent) forgetPod(uid types.UID) {
	a.sessions.Forget(uid)
	a.migrations.EndFrom(uid)
	a.uploads.StopClone(uid)
	a.mu.Lock()
	delete(a.seeds, uid)
	a.mu.Unlock()
	a.dirs.ClearDeadline(uid)
}

// forgetGone forgets the Pods the agent keeps something for (a session, a seed record, a clone
// relay, a shutdown deadline) that no longer exist on this node: deleted since, or while the
// agent was down (it runs once on start).
func (a *Agent) forgetGone(ctx context.Context) {
	uids, err := a.dirs.Deadlines()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing shutdown deadlines")
	}
	uids = append(uids, a.sessions.PodUIDs()...)
	uids = append(uids, a.uploads.CloneSources()...)
	a.mu.Lock()
	for uid := range a.seeds {
		uids = append(uids, uid)
	}
	a.mu.Unlock()
	pods, err := a.podList.List(labels.Everything())
	if err != nil {
		return
	}
	live := map[types.UID]bool{}
	for _, p := range pods {
		live[p.UID] = true
	}
	for _, uid := range uids {
		if !live[uid] {
			a.forgetPod(uid)
		}
	}
}
