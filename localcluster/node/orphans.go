package node

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/localcluster/node/podnet"
)

// removeOrphans stops and removes what an earlier run of the node left for Pods the API no
// longer binds to it (deleted while the node was down): their containers, directories and
// network namespaces. Pods still bound are adopted by their workers instead.
func (p *Provider) removeOrphans(ctx context.Context, pods corev1listers.PodLister) {
	bound, err := pods.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "listing the node's Pods to find orphans")
		return
	}
	known := map[types.UID]bool{}
	for _, pod := range bound {
		known[pod.UID] = true
	}
	dirs, _ := os.ReadDir(filepath.Join(p.cfg.Root, "pods"))
	for _, d := range dirs {
		uid := types.UID(d.Name())
		if known[uid] {
			continue
		}
		dir := p.podDir(uid)
		klog.InfoS("removing an orphaned Pod left by an earlier run of the node", "uid", uid)
		if err := stopPodContainers(dir, 10*time.Second); err != nil {
			klog.ErrorS(err, "stopping orphaned containers", "uid", uid)
		}
		_ = os.RemoveAll(dir)
	}
	net, err := p.network(ctx)
	if err != nil {
		return
	}
	refs, err := net.List()
	if err != nil {
		klog.ErrorS(err, "listing Pod network namespaces")
		return
	}
	for _, ref := range refs {
		if !known[types.UID(ref.UID)] {
			if err := net.Teardown(ctx, podnet.PodRef{UID: ref.UID, Namespace: ref.Namespace, Name: ref.Name}); err != nil {
				klog.ErrorS(err, "removing an orphaned Pod network", "pod", ref)
			}
		}
	}
}
