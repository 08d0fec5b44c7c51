// Package replicaset reconciles VirtualMachineInstanceReplicaSets as KubeVirt does: it keeps
// spec.replicas VMIs made from the set's template (named after the set, owned by it), deletes
// the surplus and the VMIs that finished (so they are replaced), adopts orphans its selector
// matches and releases VMIs it no longer matches, stands still while the set is paused, and
// reports replicas, readyReplicas, the selector for /scale and the ReplicaFailure and
// ReplicaPaused conditions.
package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/ownership"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Kind is the kind in the owner references of a set's VMIs.
const Kind = "VirtualMachineInstanceReplicaSet"

// Controller is the replica set reconciler.
type Controller struct {
	*reconcile.Loop
	client  versioned.Interface
	sets    vireolisters.VirtualMachineInstanceReplicaSetLister
	vmis    vireolisters.VirtualMachineInstanceLister
	pending pending
	written reconcile.WrittenVersions
	now     func() metav1.Time
}

// New wires the controller to its informers.
func New(client versioned.Interface, sets vireoinformers.VirtualMachineInstanceReplicaSetInformer, vmis vireoinformers.VirtualMachineInstanceInformer) (*Controller, error) {
	c := &Controller{client: client, sets: sets.Lister(), vmis: vmis.Lister(), now: metav1.Now}
	c.Loop = reconcile.NewLoop("replicaset", c.sync, sets.Informer().HasSynced, vmis.Informer().HasSynced)
	if _, err := sets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.Enqueue, UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandler(c.OwnerHandlers(Kind)); err != nil {
		return nil, err
	}
	// An orphan VMI may be adopted by the sets of its namespace whose selector matches it.
	_, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueSelecting, UpdateFunc: func(_, obj any) { c.enqueueSelecting(obj) },
	})
	return c, err
}

// enqueueSelecting queues the sets that select an orphan VMI.
func (c *Controller) enqueueSelecting(obj any) {
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok || metav1.GetControllerOf(vmi) != nil || len(vmi.Labels) == 0 {
		return
	}
	sets, err := c.sets.VirtualMachineInstanceReplicaSets(vmi.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, rs := range sets {
		if sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector); err == nil && sel.Matches(labels.Set(vmi.Labels)) {
			c.EnqueueKey(rs.Namespace + "/" + rs.Name)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	rs, err := c.sets.VirtualMachineInstanceReplicaSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.pending.forget(key)
		c.written.Forget(key)
		return nil
	}
	if err != nil || c.written.Stale(key, rs.ResourceVersion) {
		return err
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || rs.Spec.Template == nil {
		return nil // validation refuses these; nothing can be done until the set is fixed
	}
	all, err := c.vmis.VirtualMachineInstances(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	byName := make(map[string]*v1.VirtualMachineInstance, len(all))
	for _, vmi := range all {
		byName[vmi.Name] = vmi
	}
	if !c.pending.settled(key, byName, time.Now()) {
		return nil // the informer's events of the pending writes requeue the set
	}
	m := sortMembers(rs, selector, all)
	if len(m.adopt) > 0 {
		ok, err := ownership.MayAdopt(ctx, rs, func(ctx context.Context) (metav1.Object, error) {
			return c.client.KubevirtV1().VirtualMachineInstanceReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		})
		if err != nil || !ok {
			return err // the cache lags the set's deletion or replacement, whose event queues it again
		}
	}
	var scaleErr error
	scaledUp := len(m.active) < wanted(rs)
	if !rs.Spec.Paused && rs.DeletionTimestamp == nil {
		scaleErr = errors.Join(c.claim(ctx, rs, m), c.scale(ctx, key, rs, m.active))
		if scaleErr == nil {
			scaleErr = c.deleteAll(ctx, m.finished)
		}
	}
	if err := c.writeStatus(ctx, key, rs, nextStatus(rs, m.active, selector, scaleErr, scaledUp, c.now())); err != nil {
		return errors.Join(scaleErr, err)
	}
	return scaleErr
}

// scale creates or deletes VMIs until active counts spec.replicas, at most burstReplicas at a time.
func (c *Controller) scale(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet, active []*v1.VirtualMachineInstance) error {
	diff := wanted(rs) - len(active)
	n := min(max(diff, -diff), burstReplicas)
	if n == 0 {
		return nil
	}
	var (
		mu    sync.Mutex
		names []string
		errs  []error
		wg    sync.WaitGroup
	)
	record := func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		names = append(names, name)
	}
	if diff > 0 {
		for range n {
			wg.Go(func() {
				created, err := c.client.KubevirtV1().VirtualMachineInstances(rs.Namespace).Create(ctx, newVMI(rs), metav1.CreateOptions{})
				if err != nil {
					record("", fmt.Errorf("creating a VMI: %w", err))
					return
				}
				record(created.Name, nil)
			})
		}
		wg.Wait()
		c.pending.expect(key, names, nil, time.Now())
	} else {
		for _, vmi := range deletionOrder(active, n) {
			wg.Go(func() { record(vmi.Name, c.delete(ctx, vmi)) })
		}
		wg.Wait()
		c.pending.expect(key, nil, names, time.Now())
	}
	klog.FromContext(ctx).Info("Scaled the replica set", "replicaset", klog.KObj(rs), "wanted", wanted(rs), "had", len(active),
		"created", diff > 0, "vmis", names, "errors", len(errs))
	if len(errs) > 0 {
		return errs[0] // the others are most likely the same
	}
	return nil
}

// newVMI is a VMI of rs's template, named after the set (or the template's name or generateName,
// as KubeVirt names them) and controlled by it.
func newVMI(rs *v1.VirtualMachineInstanceReplicaSet) *v1.VirtualMachineInstance {
	t := rs.Spec.Template
	base := rs.Name
	switch {
	case t.ObjectMeta.Name != "":
		base = t.ObjectMeta.Name
	case t.ObjectMeta.GenerateName != "":
		base = t.ObjectMeta.GenerateName
	}
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    base,
			Namespace:       rs.Namespace,
			Labels:          t.ObjectMeta.Labels,
			Annotations:     t.ObjectMeta.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, v1.SchemeGroupVersion.WithKind(Kind))},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	return vmi
}

func (c *Controller) delete(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vmi.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting VMI %s: %w", vmi.Name, err)
	}
	return nil
}

// deleteAll deletes finished VMIs, so that scaling replaces them.
func (c *Controller) deleteAll(ctx context.Context, vmis []*v1.VirtualMachineInstance) error {
	var errs []error
	for _, vmi := range vmis {
		errs = append(errs, c.delete(ctx, vmi))
	}
	return errors.Join(errs...)
}

// claim adopts the orphans the selector matches and releases the VMIs it no longer matches,
// each with the VMI's resourceVersion as a precondition (a concurrent change wins).
func (c *Controller) claim(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet, m members) error {
	var errs []error
	for _, vmi := range m.adopt {
		refs := append(vmi.OwnerReferences, *metav1.NewControllerRef(rs, v1.SchemeGroupVersion.WithKind(Kind)))
		errs = append(errs, c.patchOwners(ctx, vmi, refs))
	}
	for _, vmi := range m.release {
		var refs []metav1.OwnerReference
		for _, ref := range vmi.OwnerReferences {
			if ref.UID != rs.UID {
				refs = append(refs, ref)
			}
		}
		errs = append(errs, c.patchOwners(ctx, vmi, refs))
	}
	return errors.Join(errs...)
}

func (c *Controller) patchOwners(ctx context.Context, vmi *v1.VirtualMachineInstance, refs []metav1.OwnerReference) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": vmi.ResourceVersion, "ownerReferences": refs,
	}})
	if err != nil {
		return err
	}
	_, err = c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("changing the owners of VMI %s: %w", vmi.Name, err)
	}
	return nil
}

// writeStatus writes status through /status when it differs from the set's.
func (c *Controller) writeStatus(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet, status v1.VirtualMachineInstanceReplicaSetStatus) error {
	if equality.Semantic.DeepEqual(rs.Status, status) {
		return nil
	}
	updated := rs.DeepCopy()
	updated.Status = status
	_, err := c.client.KubevirtV1().VirtualMachineInstanceReplicaSets(rs.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.written.Wrote(key, rs.ResourceVersion)
	}
	return err
}
