// Package simagent stands in for the node agents of many simulated nodes in the scale harness:
// one process runs one VMI watch per node with the real node agent's field selector
// (status.nodeName=<node>), and reports each VMI Scheduled on its node Running, and a VMI being
// deleted Succeeded, each with one UpdateStatus as the real agent writes it. It starts no guest.
// OnEvent hears every VMI event of every node's watch as it arrives: the scale harness measures
// the watch fan-out with it.
package simagent

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// Agents simulates the node agents of a set of nodes.
type Agents struct {
	client  versioned.Interface
	nodes   []string
	workers int
	queue   workqueue.TypedRateLimitingInterface[string]
	listers map[string]vireolisters.VirtualMachineInstanceLister
	// OnEvent, when set before Run, is called with every VMI an added or updated event of
	// node's watch delivered, and when it arrived. It must be quick and safe for concurrent use.
	OnEvent func(node string, vmi *v1.VirtualMachineInstance, at time.Time)
}

// New simulates the node agents of nodes, writing with workers concurrent writers.
func New(client versioned.Interface, nodes []string, workers int) *Agents {
	return &Agents{client: client, nodes: slices.Clone(nodes), workers: max(workers, 1), listers: map[string]vireolisters.VirtualMachineInstanceLister{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
}

// Run watches every node's VMIs and reports them until ctx ends. It returns once the watches
// have listed, with the reporting running in the background.
func (a *Agents) Run(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, node := range a.nodes {
		f := vireoinformers.NewSharedInformerFactoryWithOptions(a.client, 0, vireoinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("status.nodeName", node).String()
		}))
		informer := f.Kubevirt().V1().VirtualMachineInstances()
		enqueue := func(obj any) {
			if vmi, ok := obj.(*v1.VirtualMachineInstance); ok && vmi.Status.NodeName == node {
				if a.OnEvent != nil {
					a.OnEvent(node, vmi, time.Now())
				}
				a.queue.Add(node + "|" + vmi.Namespace + "/" + vmi.Name)
			}
		}
		if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}); err != nil {
			return err
		}
		a.listers[node] = informer.Lister()
		synced = append(synced, informer.Informer().HasSynced)
		f.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("the simulated node agents' watches did not list: %w", ctx.Err())
	}
	go func() {
		<-ctx.Done()
		a.queue.ShutDown()
	}()
	for range a.workers {
		go wait.UntilWithContext(ctx, a.work, time.Second)
	}
	return nil
}

func (a *Agents) work(ctx context.Context) {
	for {
		key, quit := a.queue.Get()
		if quit {
			return
		}
		if err := a.sync(ctx, key); err != nil && ctx.Err() == nil {
			a.queue.AddRateLimited(key)
		} else {
			a.queue.Forget(key)
		}
		a.queue.Done(key)
	}
}
