// Package vm reconciles VirtualMachines: it creates each VM's VMI from its template and
// deletes it as the VM's run strategy (Always, RerunOnFailure, Manual, Halted, Once, or the
// deprecated spec.running) and its pending start and stop requests say, holds off restarts of
// a VM whose VMIs keep failing before they run (KubeVirt's crash-loop back-off), and reports
// the VM's status as KubeVirt does: printableStatus, ready, created, conditions.
package vm

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	cdiinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/cdi/v1beta1"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	cdilisters "github.com/vireo-dev/vireo/generated/listers/cdi/v1beta1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Controller is the VM reconciler.
type Controller struct {
	*reconcile.Loop
	client  versioned.Interface
	kube    kubernetes.Interface
	vms     vireolisters.VirtualMachineLister
	vmis    vireolisters.VirtualMachineInstanceLister
	dvs     cdilisters.DataVolumeLister
	now     func() metav1.Time
	written reconcile.WrittenVersions
}

// New wires the controller to its informers.
func New(client versioned.Interface, kube kubernetes.Interface, vms vireoinformers.VirtualMachineInformer, vmis vireoinformers.VirtualMachineInstanceInformer,
	dvs cdiinformers.DataVolumeInformer) (*Controller, error) {
	c := &Controller{client: client, kube: kube, vms: vms.Lister(), vmis: vmis.Lister(), dvs: dvs.Lister(), now: metav1.Now}
	c.Loop = reconcile.NewLoop("vm", c.sync, vms.Informer().HasSynced, vmis.Informer().HasSynced, dvs.Informer().HasSynced)
	if _, err := vms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.Enqueue, UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{vmis.Informer(), dvs.Informer()} {
		if _, err := inf.AddEventHandler(c.OwnerHandlers("VirtualMachine")); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vm, err := c.vms.VirtualMachines(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.Forget(key)
		return nil
	}
	if err != nil || c.written.Stale(key, vm.ResourceVersion) {
		return err // a stale cache requeues the VM when it catches up
	}
	vmi, err := c.vmis.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		vmi, err = nil, nil
	}
	if err != nil {
		return err
	}
	if vmi != nil && !metav1.IsControlledBy(vmi, vm) {
		st := vmStatus(vm, nil, fmt.Errorf("VMI %s/%s exists and does not belong to this VM (uid %s)", ns, name, vm.UID), c.now())
		return c.writeStatus(ctx, vm, st)
	}
	return c.apply(ctx, vm, vmi, decide(vm, vmi, c.now()))
}

// apply carries out a plan and writes the VM's status.
func (c *Controller) apply(ctx context.Context, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, p plan) error {
	logger := klog.FromContext(ctx).WithValues("vm", klog.KObj(vm))
	if p.requestStart {
		// Recorded before the failed VMI goes, so its replacement starts even if this sync dies.
		st := *vm.Status.DeepCopy()
		st.StateChangeRequests = append(st.StateChangeRequests, v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest})
		updated, err := c.updateStatus(ctx, vm, st)
		if err != nil {
			return err
		}
		vm = updated
	}
	if p.deleteVMI && vmi != nil {
		err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vmi.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		logger.Info("Deleted the VM's VMI", "vmi", vmi.UID, "runStrategy", RunStrategy(vm))
	}
	var createErr error
	if p.create || (vmi != nil && vm.DeletionTimestamp == nil) {
		// The VM's DataVolumes exist before its VMI, which waits for them to be populated.
		createErr = c.ensureDataVolumes(ctx, vm)
	}
	var sized sizes
	if p.create && createErr == nil {
		fresh := newVMI(vm, p.paused)
		var err error
		if sized, err = c.applySizes(ctx, vm, fresh); err != nil {
			createErr = err
		} else {
			fresh, err = c.client.KubevirtV1().VirtualMachineInstances(vm.Namespace).Create(ctx, fresh, metav1.CreateOptions{})
		}
		switch {
		case createErr != nil:
		case err == nil:
			vmi = fresh
			logger.Info("Created the VM's VMI", "vmi", fresh.UID, "runStrategy", RunStrategy(vm))
		case apierrors.IsAlreadyExists(err):
			// Made by an earlier sync the cache has not seen yet: its event requeues us.
		default:
			createErr = err
		}
	}
	next := vm.DeepCopy()
	if p.create && createErr == nil {
		next.Status.InstancetypeRef, next.Status.PreferenceRef = sized.instancetype, sized.preference
	}
	if p.consumed > 0 && createErr == nil {
		next.Status.StateChangeRequests = next.Status.StateChangeRequests[p.consumed:]
		if len(next.Status.StateChangeRequests) == 0 {
			next.Status.StateChangeRequests = nil
		}
	}
	if p.setFailure {
		next.Status.StartFailure = p.startFailure
	}
	if p.requeue > 0 {
		c.EnqueueAfter(vm.Namespace+"/"+vm.Name, p.requeue)
	}
	if err := c.writeStatus(ctx, vm, vmStatus(next, vmi, createErr, c.now())); err != nil {
		return err
	}
	return createErr
}

// writeStatus writes status through /status when it differs from the VM's.
func (c *Controller) writeStatus(ctx context.Context, vm *v1.VirtualMachine, status v1.VirtualMachineStatus) error {
	if equality.Semantic.DeepEqual(vm.Status, status) {
		return nil
	}
	_, err := c.updateStatus(ctx, vm, status)
	return err
}

func (c *Controller) updateStatus(ctx context.Context, vm *v1.VirtualMachine, status v1.VirtualMachineStatus) (*v1.VirtualMachine, error) {
	updated := vm.DeepCopy()
	updated.Status = status
	out, err := c.client.KubevirtV1().VirtualMachines(vm.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return vm, nil
	}
	if err != nil {
		return nil, err
	}
	c.written.Wrote(vm.Namespace+"/"+vm.Name, vm.ResourceVersion)
	return out, nil
}
