// Package vmi reconciles VirtualMachineInstances. Today it refuses to start VMIs that ask for what
// Vireo cannot run yet, and it finishes deletion:
// once a deleted VMI has no launcher Pod left, it releases the foreground-delete
// finalizer so the object (and a terminating namespace) can go. Launcher Pod creation
// and phase tracking build on this loop.
package vmi

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/reconcile"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// Controller is the VMI reconciler.
type Controller struct {
	*reconcile.Loop
	client versioned.Interface
	vmis   vireolisters.VirtualMachineInstanceLister
	pods   corelisters.PodLister
}

// New wires the controller to its informers.
func New(client versioned.Interface, vmis vireoinformers.VirtualMachineInstanceInformer, pods coreinformers.PodInformer) (*Controller, error) {
	c := &Controller{client: client, vmis: vmis.Lister(), pods: pods.Lister()}
	c.Loop = reconcile.NewLoop("vmi", c.sync, vmis.Informer().HasSynced, pods.Informer().HasSynced)
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.Enqueue,
		UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueOwner}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueOwner requeues the VMI of a deleted launcher Pod.
func (c *Controller) enqueueOwner(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "VirtualMachineInstance" {
			c.EnqueueKey(pod.Namespace + "/" + ref.Name)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	vmi, err := c.vmis.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if refused, err := c.refuseUnsupported(ctx, vmi); refused || err != nil {
		return err
	}
	if vmi.DeletionTimestamp == nil || !slices.ContainsFunc(vmi.Finalizers, isVMIFinalizer) {
		return nil
	}
	launchers, err := c.launcherPods(vmi)
	if err != nil || len(launchers) > 0 {
		// The node agent shuts the guest down; the Pod's deletion requeues us.
		return err
	}
	return c.releaseFinalizer(ctx, vmi)
}

func (c *Controller) launcherPods(vmi *v1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: string(vmi.UID)})
	return c.pods.Pods(vmi.Namespace).List(sel)
}

func (c *Controller) releaseFinalizer(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	updated := vmi.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, isVMIFinalizer)
	_, err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		klog.FromContext(ctx).Info("Released the finalizer of a deleted VMI without launcher", "vmi", klog.KObj(vmi))
	}
	return err
}

// isVMIFinalizer reports whether f is Vireo's VMI finalizer, under its current or earlier name.
func isVMIFinalizer(f string) bool {
	return f == v1.VirtualMachineInstanceFinalizer || f == v1.LegacyVirtualMachineInstanceFinalizer
}
