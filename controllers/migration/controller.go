// Package migration reconciles VirtualMachineInstanceMigrations. Today it finishes their
// deletion: a deleted migration holds KubeVirt's migration finalizer until the controller has
// cleaned up after it, and with no migration engine yet there is nothing to abort, so the
// finalizer is released at once. Target Pods, the migration phases and aborts build on this loop.
package migration

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/reconcile"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// Controller is the migration reconciler.
type Controller struct {
	*reconcile.Loop
	client     versioned.Interface
	migrations vireolisters.VirtualMachineInstanceMigrationLister
}

// New wires the controller to its informer.
func New(client versioned.Interface, migrations vireoinformers.VirtualMachineInstanceMigrationInformer) (*Controller, error) {
	c := &Controller{client: client, migrations: migrations.Lister()}
	c.Loop = reconcile.NewLoop("migration", c.sync, migrations.Informer().HasSynced)
	_, err := migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.Enqueue,
		UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	})
	return c, err
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	m, err := c.migrations.VirtualMachineInstanceMigrations(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.DeletionTimestamp == nil || !slices.Contains(m.Finalizers, v1.VirtualMachineInstanceMigrationFinalizer) {
		return nil
	}
	updated := m.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool {
		return f == v1.VirtualMachineInstanceMigrationFinalizer
	})
	_, err = c.client.KubevirtV1().VirtualMachineInstanceMigrations(ns).Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		klog.FromContext(ctx).Info("Released the finalizer of a deleted migration", "migration", klog.KObj(m))
	}
	return err
}
