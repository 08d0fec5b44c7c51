// Package evacuation moves VMIs off drained nodes, as KubeVirt's disruption-budget and
// evacuation controllers do, without an eviction webhook (Vireo has no admission webhooks).
//
// Every VMI whose guest an eviction must not take down (eviction strategy LiveMigrate or
// External, or LiveMigrateIfPossible while it is live-migratable) gets a PodDisruptionBudget
// over its launcher Pods that allows no disruption: the eviction API answers 429 for them, so
// `kubectl drain` keeps retrying instead of killing the guest. When a VMI's node is cordoned
// (spec.unschedulable, the first thing `kubectl drain` does) and the VMI is to live-migrate
// on eviction, the controller creates a VirtualMachineInstanceMigration for it (annotated
// kubevirt.io/evacuationMigration=<node>); the migration controller moves the guest and deletes
// the source launcher Pod, and drain's next eviction of that Pod goes through. A failed
// evacuation migration is retried after a back-off while the node stays cordoned.
//
// The decisions (Decide, NeedsBudget; the back-off is package migrationretry's) are pure
// functions; the controller gathers their input from informers and carries them out.
package evacuation

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	coreinformers "k8s.io/client-go/informers/core/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Indexes this controller adds to the shared informers (names distinct from other controllers').
const (
	// byNode indexes VMIs by status.nodeName.
	byNode = "evacuation.nodeName"
	// byVMI indexes migrations by "namespace/spec.vmiName".
	byVMI = "evacuation.vmi"
)

// createdTimeout is how long a created migration the informer has not delivered yet holds back
// another one for the same VMI.
const createdTimeout = time.Minute

// Controller is the evacuation reconciler; its keys are VMI keys.
type Controller struct {
	*reconcile.Loop
	client      versioned.Interface
	kube        kubernetes.Interface
	vmis        vireolisters.VirtualMachineInstanceLister
	vmiIndex    cache.Indexer
	migrations  vireolisters.VirtualMachineInstanceMigrationLister
	migrationIx cache.Indexer
	nodes       corelisters.NodeLister
	budgets     policylisters.PodDisruptionBudgetLister
	now         func() time.Time
	created     createdMigrations
}

// New wires the controller to its informers: VMIs and migrations (shared with the other
// controllers), Nodes, and the PodDisruptionBudgets it creates.
func New(client versioned.Interface, kube kubernetes.Interface, vmis vireoinformers.VirtualMachineInstanceInformer,
	migrations vireoinformers.VirtualMachineInstanceMigrationInformer, nodes coreinformers.NodeInformer,
	budgets policyinformers.PodDisruptionBudgetInformer) (*Controller, error) {
	if err := vmis.Informer().AddIndexers(cache.Indexers{byNode: indexByNode}); err != nil {
		return nil, err
	}
	if err := migrations.Informer().AddIndexers(cache.Indexers{byVMI: indexByVMI}); err != nil {
		return nil, err
	}
	c := &Controller{client: client, kube: kube, vmis: vmis.Lister(), vmiIndex: vmis.Informer().GetIndexer(),
		migrations: migrations.Lister(), migrationIx: migrations.Informer().GetIndexer(), nodes: nodes.Lister(),
		budgets: budgets.Lister(), now: time.Now}
	c.Loop = reconcile.NewLoop("evacuation", c.sync, vmis.Informer().HasSynced, migrations.Informer().HasSynced,
		nodes.Informer().HasSynced, budgets.Informer().HasSynced)
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{vmis.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: c.Enqueue, UpdateFunc: func(_, obj any) { c.Enqueue(obj) }, DeleteFunc: c.Enqueue}},
		{migrations.Informer(), handleAll(c.enqueueForMigration)},
		{nodes.Informer(), cache.ResourceEventHandlerFuncs{AddFunc: c.enqueueForNode, UpdateFunc: c.nodeUpdated}},
		{budgets.Informer(), c.OwnerHandlers("VirtualMachineInstance")},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func indexByNode(obj any) ([]string, error) {
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok || vmi.Status.NodeName == "" {
		return nil, nil
	}
	return []string{vmi.Status.NodeName}, nil
}

func indexByVMI(obj any) ([]string, error) {
	m, ok := obj.(*v1.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil
	}
	return []string{m.Namespace + "/" + m.Spec.VMIName}, nil
}

// handleAll calls f with the object (or its tombstone's) of every add, update and delete.
func handleAll(f func(obj any)) cache.ResourceEventHandlerFuncs {
	unwrap := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		f(obj)
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: unwrap, UpdateFunc: func(_, obj any) { unwrap(obj) }, DeleteFunc: unwrap}
}

// enqueueForMigration queues the VMI a migration names.
func (c *Controller) enqueueForMigration(obj any) {
	if m, ok := obj.(*v1.VirtualMachineInstanceMigration); ok {
		c.EnqueueKey(m.Namespace + "/" + m.Spec.VMIName)
	}
}

// nodeUpdated queues a node's VMIs when it is cordoned or uncordoned.
func (c *Controller) nodeUpdated(old, obj any) {
	before, ok1 := old.(*corev1.Node)
	after, ok2 := obj.(*corev1.Node)
	if ok1 && ok2 && before.Spec.Unschedulable == after.Spec.Unschedulable {
		return
	}
	c.enqueueForNode(obj)
}

// enqueueForNode queues the VMIs on a cordoned node.
func (c *Controller) enqueueForNode(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok || !node.Spec.Unschedulable {
		return
	}
	objs, err := c.vmiIndex.ByIndex(byNode, node.Name)
	if err != nil {
		return
	}
	for _, obj := range objs {
		c.Enqueue(obj)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := c.vmis.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Its budget goes with it (owner reference).
		c.created.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.syncBudget(ctx, vmi); err != nil {
		return err
	}
	return c.syncEvacuation(ctx, key, vmi)
}

// migrationsOf returns the migrations naming vmi.
func (c *Controller) migrationsOf(vmi *v1.VirtualMachineInstance) []*v1.VirtualMachineInstanceMigration {
	objs, err := c.migrationIx.ByIndex(byVMI, vmi.Namespace+"/"+vmi.Name)
	if err != nil {
		return nil
	}
	ms := make([]*v1.VirtualMachineInstanceMigration, 0, len(objs))
	for _, obj := range objs {
		if m, ok := obj.(*v1.VirtualMachineInstanceMigration); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// createdMigrations remembers, per VMI key, the evacuation migration the controller created
// last until the migration informer has it: until then a sync would not see it in flight and
// create another.
type createdMigrations struct {
	mu sync.Mutex
	m  map[string]createdMigration
}

type createdMigration struct {
	name string
	at   time.Time
}

func (c *createdMigrations) add(key, name string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]createdMigration{}
	}
	c.m[key] = createdMigration{name: name, at: at}
}

// pending returns how long the migration created for key may still be missing from the
// informer (known tells whether it has arrived): 0 when there is none to wait for.
func (c *createdMigrations) pending(key string, now time.Time, known func(name string) bool) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, ok := c.m[key]
	if !ok {
		return 0
	}
	if left := cm.at.Add(createdTimeout).Sub(now); left > 0 && !known(cm.name) {
		return left
	}
	delete(c.m, key)
	return 0
}

func (c *createdMigrations) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}
