// Package pool reconciles VirtualMachinePools as KubeVirt does: it keeps spec.replicas VMs made
// from the pool's template, named <pool>-<index> with the lowest free indexes (their DataVolume
// templates, and as asked their ConfigMaps and Secrets, get the index too), removes the surplus
// by the scale-in strategy, brings VMs made from an older template to the current one by the
// update strategy (proactive: the guest restarts, at most maxUnavailable at a time), replaces
// VMs that keep failing to start when autohealing asks, stands still while paused, and reports
// replicas, readyReplicas, the selector for /scale and the ReplicaFailure and ReplicaPaused
// conditions.
package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
	"github.com/vireo-dev/vireo/controllers/ownership"
	"github.com/vireo-dev/vireo/controllers/replicastatus"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	coreinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	poolinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/pool/v1beta1"
	corelisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	poollisters "github.com/vireo-dev/vireo/generated/listers/pool/v1beta1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Controller is the pool reconciler.
type Controller struct {
	*reconcile.Loop
	client  versioned.Interface
	pools   poollisters.VirtualMachinePoolLister
	vms     corelisters.VirtualMachineLister
	vmis    corelisters.VirtualMachineInstanceLister
	written reconcile.WrittenVersions
	now     func() metav1.Time
}

// New wires the controller to its informers.
func New(client versioned.Interface, pools poolinformers.VirtualMachinePoolInformer, vms coreinformers.VirtualMachineInformer,
	vmis coreinformers.VirtualMachineInstanceInformer) (*Controller, error) {
	c := &Controller{client: client, pools: pools.Lister(), vms: vms.Lister(), vmis: vmis.Lister(), now: metav1.Now}
	c.Loop = reconcile.NewLoop("pool", c.sync, pools.Informer().HasSynced, vms.Informer().HasSynced, vmis.Informer().HasSynced)
	if _, err := pools.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.Enqueue, UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := vms.Informer().AddEventHandler(c.OwnerHandlers("VirtualMachinePool")); err != nil {
		return nil, err
	}
	// An orphan VM may be adopted by the pools of its namespace whose selector matches it.
	_, err := vms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueSelecting, UpdateFunc: func(_, obj any) { c.enqueueSelecting(obj) },
	})
	return c, err
}

// enqueueSelecting queues the pools that select an orphan VM.
func (c *Controller) enqueueSelecting(obj any) {
	vm, ok := obj.(*v1.VirtualMachine)
	if !ok || metav1.GetControllerOf(vm) != nil || len(vm.Labels) == 0 {
		return
	}
	pools, err := c.pools.VirtualMachinePools(vm.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, pool := range pools {
		if sel, err := metav1.LabelSelectorAsSelector(pool.Spec.Selector); err == nil && sel.Matches(labels.Set(vm.Labels)) {
			c.EnqueueKey(pool.Namespace + "/" + pool.Name)
		}
	}
}

// claim makes the pool the controller of the orphans it adopts and removes it from the owners of
// the VMs it releases; each update carries the VM's resourceVersion (a concurrent change wins,
// and the next sync looks again).
func (c *Controller) claim(ctx context.Context, pool *v1beta1.VirtualMachinePool, m members) error {
	var errs []error
	for _, vm := range m.adopt {
		refs := append(slices.Clone(vm.OwnerReferences), *metav1.NewControllerRef(pool, v1beta1.SchemeGroupVersion.WithKind("VirtualMachinePool")))
		errs = append(errs, c.setOwners(ctx, vm, refs, "adopting"))
	}
	for _, vm := range m.release {
		refs := slices.DeleteFunc(slices.Clone(vm.OwnerReferences), func(r metav1.OwnerReference) bool { return r.UID == pool.UID })
		errs = append(errs, c.setOwners(ctx, vm, refs, "releasing"))
	}
	return errors.Join(errs...)
}

func (c *Controller) setOwners(ctx context.Context, vm *v1.VirtualMachine, refs []metav1.OwnerReference, doing string) error {
	updated := vm.DeepCopy()
	updated.OwnerReferences = refs
	_, err := c.client.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s VM %s: %w", doing, vm.Name, err)
	}
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pool, err := c.pools.VirtualMachinePools(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.Forget(key)
		return nil
	}
	if err != nil || c.written.Stale(key, pool.ResourceVersion) {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(pool.Spec.Selector)
	if err != nil || pool.Spec.VirtualMachineTemplate == nil {
		return nil // validation refuses these; nothing can be done until the pool is fixed
	}
	all, err := c.vms.VirtualMachines(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, vm := range all {
		taken[vm.Name] = true
	}
	m := sortMembers(pool, selector, all)
	if len(m.adopt) > 0 {
		ok, err := ownership.MayAdopt(ctx, pool, func(ctx context.Context) (metav1.Object, error) {
			return c.client.PoolV1beta1().VirtualMachinePools(ns).Get(ctx, name, metav1.GetOptions{})
		})
		if err != nil || !ok {
			return err // the cache lags the pool's deletion or replacement, whose event queues it again
		}
	}
	active := m.active
	scaleErr := c.claim(ctx, pool, m)
	scaledUp := len(active) < wanted(pool)
	if !pool.Spec.Paused && pool.DeletionTimestamp == nil {
		var healErr error
		active, healErr = c.autoheal(ctx, pool, active)
		scaleErr = errors.Join(scaleErr, healErr, c.scale(ctx, pool, active, taken))
		if scaleErr == nil {
			scaleErr = c.update(ctx, pool, active)
		}
	}
	ready := 0
	for _, vm := range active {
		if vmReady(vm) {
			ready++
		}
	}
	st := replicastatus.Next(&pool.Status, len(active), ready, selector, pool.Spec.Paused, scaleErr, scaledUp, c.now())
	if pool.Spec.Autohealing != nil {
		c.EnqueueAfter(key, requeueAfter) // a VM may have failed long enough by then
	}
	if err := c.writeStatus(ctx, key, pool, st); err != nil {
		return errors.Join(scaleErr, err)
	}
	return scaleErr
}

func wanted(pool *v1beta1.VirtualMachinePool) int {
	if pool.Spec.Replicas == nil {
		return 1
	}
	return int(*pool.Spec.Replicas)
}

// autoheal deletes the VMs that keep failing to start and returns the others; the scaling that
// follows replaces them.
func (c *Controller) autoheal(ctx context.Context, pool *v1beta1.VirtualMachinePool, active []*v1.VirtualMachine) ([]*v1.VirtualMachine, error) {
	var kept []*v1.VirtualMachine
	var errs []error
	for _, vm := range active {
		if !failing(pool.Spec.Autohealing, vm, c.now().Time) {
			kept = append(kept, vm)
			continue
		}
		klog.FromContext(ctx).Info("Replacing a VM of the pool that fails to start", "pool", klog.KObj(pool), "vm", vm.Name,
			"status", vm.Status.PrintableStatus)
		errs = append(errs, c.deleteVM(ctx, vm))
	}
	return kept, errors.Join(errs...)
}

// scale creates VMs at the lowest free indexes, or removes the surplus by the scale-in strategy.
func (c *Controller) scale(ctx context.Context, pool *v1beta1.VirtualMachinePool, active []*v1.VirtualMachine, taken map[string]bool) error {
	diff := wanted(pool) - len(active)
	var errs []error
	switch {
	case diff > 0:
		rev := revision(pool)
		for _, idx := range freeIndexes(pool, taken, min(diff, burstReplicas)) {
			_, err := c.client.KubevirtV1().VirtualMachines(pool.Namespace).Create(ctx, newVM(pool, idx, rev), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("creating VM %s-%d: %w", pool.Name, idx, err))
			}
		}
	case diff < 0:
		s := pool.Spec.ScaleInStrategy
		if s != nil && (s.Unmanaged != nil || s.Opportunistic != nil) {
			return nil // the pool shrinks as VMs are deleted by other means
		}
		var policy *v1beta1.VirtualMachinePoolSelectionPolicy
		if s != nil && s.Proactive != nil {
			policy = s.Proactive.SelectionPolicy
		}
		candidates := order(pool, active, policy)
		for _, vm := range candidates[:min(-diff, burstReplicas, len(candidates))] {
			errs = append(errs, c.deleteVM(ctx, vm))
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) deleteVM(ctx context.Context, vm *v1.VirtualMachine) error {
	err := c.client.KubevirtV1().VirtualMachines(vm.Namespace).Delete(ctx, vm.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vm.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting VM %s: %w", vm.Name, err)
	}
	return nil
}

// update brings the VMs made from an older template to the current one: opportunistic changes
// the VMs only (a guest takes the change when it next starts); proactive (the default) also
// restarts the running guests of older revisions, at most maxUnavailable VMs not ready at once.
func (c *Controller) update(ctx context.Context, pool *v1beta1.VirtualMachinePool, active []*v1.VirtualMachine) error {
	s := pool.Spec.UpdateStrategy
	if s != nil && s.Unmanaged != nil {
		return nil
	}
	rev := revision(pool)
	var errs []error
	for _, vm := range active {
		if vm.Labels[v1beta1.RevisionLabel] == rev {
			continue
		}
		updated := vm.DeepCopy()
		setTemplate(updated, pool, index(pool, vm.Name), rev)
		if _, err := c.client.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("updating VM %s: %w", vm.Name, err))
		}
	}
	if len(errs) > 0 || (s != nil && s.Opportunistic != nil) {
		return errors.Join(errs...)
	}
	var policy *v1beta1.VirtualMachinePoolSelectionPolicy
	if s != nil && s.Proactive != nil {
		policy = s.Proactive.SelectionPolicy
	}
	return c.restartOutdated(ctx, pool, order(pool, active, policy), rev)
}

// restartOutdated deletes the VMIs of an older revision, which their VMs start again from the
// current template, keeping at most maxUnavailable VMs not ready.
func (c *Controller) restartOutdated(ctx context.Context, pool *v1beta1.VirtualMachinePool, vms []*v1.VirtualMachine, rev string) error {
	budget := maxUnavailable(pool, wanted(pool))
	for _, vm := range vms {
		if !vmReady(vm) {
			budget--
		}
	}
	var errs []error
	for _, vm := range vms {
		vmi, err := c.vmis.VirtualMachineInstances(vm.Namespace).Get(vm.Name)
		if err != nil || vmi.DeletionTimestamp != nil || vmi.Labels[v1beta1.RevisionLabel] == rev || !metav1.IsControlledBy(vmi, vm) {
			continue
		}
		if vmReady(vm) && budget <= 0 {
			break
		}
		if vmReady(vm) {
			budget--
		}
		klog.FromContext(ctx).Info("Restarting a VM of the pool on its new template", "pool", klog.KObj(pool), "vm", vm.Name, "revision", rev)
		err = c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vmi.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("restarting VM %s: %w", vm.Name, err))
		}
	}
	return errors.Join(errs...)
}

// writeStatus writes status through /status when it differs from the pool's.
func (c *Controller) writeStatus(ctx context.Context, key string, pool *v1beta1.VirtualMachinePool, status v1.VirtualMachineInstanceReplicaSetStatus) error {
	if equality.Semantic.DeepEqual(pool.Status, status) {
		return nil
	}
	updated := pool.DeepCopy()
	updated.Status = status
	_, err := c.client.PoolV1beta1().VirtualMachinePools(pool.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.written.Wrote(key, pool.ResourceVersion)
	}
	return err
}

// requeueAfter is when a pool with autohealing looks at its failing VMs again.
const requeueAfter = 30 * time.Second
