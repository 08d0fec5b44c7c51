// Package reconcile is the work loop every Vireo controller shares: a rate-limited queue of
// namespace/name keys, workers that call the controller's sync function, and retries with
// back-off when it fails. Controllers supply only their informers and their sync.
package reconcile

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// SyncFunc brings the object named by key ("namespace/name") to its desired state. A returned
// error requeues the key with back-off.
type SyncFunc func(ctx context.Context, key string) error

// Loop is a controller's queue and workers.
type Loop struct {
	name   string
	sync   SyncFunc
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
}

// NewLoop builds the loop of the controller called name; Run waits for synced before working.
func NewLoop(name string, sync SyncFunc, synced ...cache.InformerSynced) *Loop {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	return &Loop{name: name, sync: sync, synced: synced, queue: queue}
}

// NewProgressFirstLoop is NewLoop whose queue hands out work in progress (keys urgent says are)
// before new work: see progressFirst.
func NewProgressFirstLoop(name string, sync SyncFunc, urgent UrgentFunc, synced ...cache.InformerSynced) *Loop {
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, Queue: newProgressFirst(urgent)})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, Queue: base})
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: delaying})
	return &Loop{name: name, sync: sync, synced: synced, queue: queue}
}

// Enqueue queues an informer object (or its tombstone) by key.
func (l *Loop) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	l.queue.Add(key)
}

// OwnerHandlers requeue, on every change of an object (a deletion too), the object of kind
// that controls it: a launcher Pod's VMI, a VMI's VM.
func (l *Loop) OwnerHandlers(kind string) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == kind {
			l.queue.Add(o.GetNamespace() + "/" + ref.Name)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue}
}

// EnqueueKey queues a "namespace/name" key.
func (l *Loop) EnqueueKey(key string) { l.queue.Add(key) }

// EnqueueAfter queues a "namespace/name" key once d has passed (a deadline the controller must
// look at again, such as a grace period).
func (l *Loop) EnqueueAfter(key string, d time.Duration) { l.queue.AddAfter(key, d) }

// Run processes the queue with workers until ctx ends.
func (l *Loop) Run(ctx context.Context, workers int) error {
	defer l.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), l.synced...) {
		return fmt.Errorf("%s controller: caches did not sync", l.name)
	}
	for range workers {
		go wait.UntilWithContext(ctx, l.work, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (l *Loop) work(ctx context.Context) {
	for l.processNext(ctx) {
	}
}

func (l *Loop) processNext(ctx context.Context) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(key)
	if err := l.sync(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "Sync failed; retrying", "controller", l.name, "key", key)
		l.queue.AddRateLimited(key)
		return true
	}
	l.queue.Forget(key)
	return true
}
