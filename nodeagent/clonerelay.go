package nodeagent

import (
	"context"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/uploadapi"
)

// relayClone serves the upload socket in the emptyDir of a clone's source Pod on this node,
// once it runs, relaying each connection to the socket of the clone's target upload Pod (found
// again for every connection: cloneTarget), and stops when the Pod ends. Neither Pod needs a
// hostPath: each has only its own emptyDir, which the agent opens without following links.
func (a *Agent) relayClone(source *corev1.Pod) {
	if source.DeletionTimestamp != nil || source.Status.Phase != corev1.PodRunning {
		a.stopCloneRelay(source.UID)
		return
	}
	a.mu.Lock()
	_, running := a.cloneRelays[source.UID]
	a.mu.Unlock()
	if running {
		return
	}
	ns, name := source.Namespace, source.Name
	proxy, err := a.dirs.startSocketProxy(source.UID, []string{uploadapi.SocketName}, func(ctx context.Context, socket string) (net.Conn, error) {
		src, err := a.pods.Pods(ns).Get(name)
		if err != nil {
			return nil, err
		}
		target, err := cloneTarget(a.pods, src)
		if err != nil {
			return nil, err
		}
		return a.dirs.dialSocket(ctx, target.UID, socket)
	})
	if err != nil {
		klog.ErrorS(err, "Serving the clone source Pod's upload socket", "pod", klog.KObj(source))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, raced := a.cloneRelays[source.UID]; raced {
		proxy.close()
		return
	}
	a.cloneRelays[source.UID] = proxy
	klog.InfoS("Relaying a clone", "source", klog.KObj(source), "target", source.Annotations[uploadapi.CloneTargetAnnotation])
}

// stopCloneRelay stops the relay of source Pod uid, if any.
func (a *Agent) stopCloneRelay(uid types.UID) {
	a.mu.Lock()
	proxy := a.cloneRelays[uid]
	delete(a.cloneRelays, uid)
	a.mu.Unlock()
	if proxy != nil {
		proxy.close()
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
	target, herr := uploadPodIn(pods, ns, dv, types.UID(uid))
	if herr != nil {
		return nil, fmt.Errorf("clone source Pod %s/%s: %s", source.Namespace, source.Name, herr.msg)
	}
	if got := target.Annotations[uploadapi.CloneSourceNamespaceAnnotation]; got != source.Namespace {
		return nil, fmt.Errorf("the upload Pod %s/%s clones from namespace %q, not from %s", target.Namespace, target.Name, got, source.Namespace)
	}
	return target, nil
}
