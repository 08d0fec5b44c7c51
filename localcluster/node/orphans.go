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
// network namespaces. Pods still bound are adopted by their workers instead. Each candidate
// is checked again just before removal: a Pod bound meanwhile has a worker or is listed.
func (p *Provider) removeOrphans(ctx context.Context, pods corev1listers.PodLister) {
	net, err := p.network(ctx)
	if err != nil {
		return
	}
	orphan := func(uid types.UID) bool {
		p.mu.Lock()
		_, running := p.workers[uid]
		p.mu.Unlock()
		if running {
			return false
		}
		bound, err := pods.List(labels.Everything())
		if err != nil {
			return false
		}
		for _, pod := range bound {
			if pod.UID == uid {
				return false
			}
		}
		return true
	}
	dirs, _ := os.ReadDir(filepath.Join(p.cfg.Root, "pods"))
	for _, d := range dirs {
		if uid := types.UID(d.Name()); orphan(uid) {
			klog.InfoS("removing an orphaned Pod left by an earlier run of the node", "uid", uid)
			p.removeLeftovers(ctx, uid, podnet.PodRef{UID: string(uid)})
		}
	}
	refs, err := net.List()
	if err != nil {
		klog.ErrorS(err, "listing Pod network namespaces")
		return
	}
	for _, ref := range refs {
		if orphan(types.UID(ref.UID)) {
			if err := net.Teardown(ctx, ref); err != nil {
				klog.ErrorS(err, "removing an orphaned Pod network", "pod", ref)
			}
		}
	}
}

// removeLeftovers stops the containers of a Pod this run of the node does not manage and
// removes its directory and network.
func (p *Provider) removeLeftovers(ctx context.Context, uid types.UID, ref podnet.PodRef) {
	dir := p.podDir(uid)
	if err := stopPodContainers(dir, 10*time.Second); err != nil {
		klog.ErrorS(err, "stopping leftover containers", "uid", uid)
	}
	if net, err := p.network(ctx); err == nil {
		if err := net.Teardown(ctx, ref); err != nil {
			klog.ErrorS(err, "removing a leftover Pod network", "uid", uid)
		}
	}
	_ = os.RemoveAll(dir)
}
