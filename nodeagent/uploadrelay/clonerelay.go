package uploadrelay

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// SyncCloneSource serves the upload socket in the emptyDir of a clone's source Pod on this node,
// once it runs, relaying each connection to the socket of the clone's target upload Pod (found
// again for every connection: cloneTarget), and stops when the Pod ends. Neither Pod needs a
// hostPath: each has only its own emptyDir, which the agent opens without following links.
func (u *Relay) SyncCloneSource(source *corev1.Pod) {
	if source.DeletionTimestamp != nil || source.Status.Phase != corev1.PodRunning {
		u.StopClone(source.UID)
		return
	}
	u.mu.Lock()
	_, running := u.clones[source.UID]
	closed := u.closed
	u.mu.Unlock()
	if running || closed {
		return
	}
	ns, name := source.Namespace, source.Name
	proxy, err := relay.StartSocketProxy(u.dirs, source.UID, []string{uploadapi.SocketName}, func(ctx context.Context, socket string) (net.Conn, error) {
		src, err := u.pods.Pods(ns).Get(name)
		if err != nil {
			return nil, err
		}
		target, err := cloneTarget(u.pods, src)
		if err != nil {
			return nil, err
		}
		return u.dirs.DialSocket(ctx, target.UID, socket)
	})
	if err != nil {
		klog.ErrorS(err, "Serving the clone source Pod's upload socket", "pod", klog.KObj(source))
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, raced := u.clones[source.UID]; raced || u.closed {
		proxy.Close()
		return
	}
	u.clones[source.UID] = proxy
	klog.InfoS("Relaying a clone", "source", klog.KObj(source), "target", source.Annotations[uploadapi.CloneTargetAnnotation])
}

// StopClone stops the relay of clone source Pod uid, if any.
func (u *Relay) StopClone(uid types.UID) {
	u.mu.Lock()
	proxy := u.clones[uid]
	delete(u.clones, uid)
	u.mu.Unlock()
	if proxy != nil {
		proxy.Close()
	}
}

// CloneSources are the clone source Pods whose upload socket is relayed.
func (u *Relay) CloneSources() []types.UID {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Collect(maps.Keys(u.clones))
}

// CloseAll stops every clone's relay; none starts afterwards.
func (u *Relay) CloseAll() {
	u.mu.Lock()
	clones := u.clones
	u.clones, u.closed = map[types.UID]*relay.SocketProxy{}, true
	u.mu.Unlock()
	for _, p := range clones {
		p.Close()
	}
}

// cloneTarget is the running upload Pod on this node that clone source Pod source may send to,
// paired as uploadapi states: source is named and labelled for the DataVolume its annotation
// names, and the target is that DataVolume's upload Pod, which names source's namespace as its
// source. A source Pod another namespace forged thus reaches no target; a target Pod its own
// namespace forged receives only from the source its annotation's DataVolume clones from.
func cloneTarget(pods corelisters.PodLister, source *corev1.Pod) (*corev1.Pod, error) {
	uid := source.Labels[uploadapi.CloneTargetUIDLabel]
	if uid == "" || source.Name != uploadapi.CloneSourcePodName(uid) || source.Labels[v1.AppLabel] != v1.CloneSourceApp {
		return nil, fmt.Errorf("Pod %s/%s is not a clone's source Pod", source.Namespace, source.Name)
	}
	ns, dv, ok := strings.Cut(source.Annotations[uploadapi.CloneTargetAnnotation], "/")
	if !ok || ns == "" || dv == "" {
		return nil, fmt.Errorf("clone source Pod %s/%s names no target DataVolume (%s)", source.Namespace, source.Name, uploadapi.CloneTargetAnnotation)
	}
	target, herr := uploadPod(pods, ns, dv, types.UID(uid))
	if herr != nil {
		return nil, fmt.Errorf("clone source Pod %s/%s: %s", source.Namespace, source.Name, herr.Message)
	}
	if got := target.Annotations[uploadapi.CloneSourceNamespaceAnnotation]; got != source.Namespace {
		return nil, fmt.Errorf("the upload Pod %s/%s clones from namespace %q, not from %s", target.Namespace, target.Name, got, source.Namespace)
	}
	return target, nil
}
