package migration

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// apply carries out decision d about in.m, in the order decision documents; the first error
// stops it and requeues the migration, whose next sync decides again from what was done.
func (c *Controller) apply(ctx context.Context, in input, d decision) error {
	key := in.m.Namespace + "/" + in.m.Name
	if d.create != nil {
		if err := c.createTarget(ctx, in, d.create); err != nil {
			return err
		}
	}
	if d.vmiStatus != nil {
		if _, err := reconcile.WriteVMIStatus(ctx, c.client, &c.vmiWritten, in.vmi, *d.vmiStatus); err != nil {
			return err
		}
	}
	if d.deleteTarget {
		if err := c.deletePod(ctx, in.target); err != nil {
			return err
		}
	}
	if d.deleteSource {
		if err := c.deletePod(ctx, in.source); err != nil {
			return err
		}
	}
	m, err := c.writeStatus(ctx, in.m, d.status)
	if err != nil || m == nil {
		return err
	}
	if d.release {
		if err := c.releaseFinalizer(ctx, m); err != nil {
			return err
		}
	}
	if d.recheck > 0 {
		c.EnqueueAfter(key, d.recheck)
	}
	return nil
}

// createTarget creates the target Pod; one that exists already must be this migration's.
func (c *Controller) createTarget(ctx context.Context, in input, pod *corev1.Pod) error {
	created, err := c.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Made by an earlier sync whose Pod the cache has not seen yet.
		created, err = c.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && (!metav1.IsControlledBy(created, in.vmi) || created.Labels[v1.MigrationJobLabel] != string(in.m.UID)) {
			err = fmt.Errorf("pod %s/%s exists but is not the target Pod of migration %s (uid %s)", created.Namespace, created.Name, in.m.Name, in.m.UID)
		}
	}
	if err != nil {
		return fmt.Errorf("creating the target Pod of migration %s/%s: %w", in.m.Namespace, in.m.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Created target Pod", "migration", klog.KObj(in.m), "pod", klog.KObj(created))
	return nil
}

// deletePod deletes pod if it is still the Pod seen (its UID).
func (c *Controller) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted a migration's Pod", "pod", klog.KObj(pod))
	return nil
}

// writeStatus writes status through m's /status when it differs, and returns the migration as
// stored (nil when it no longer exists).
func (c *Controller) writeStatus(ctx context.Context, m *v1.VirtualMachineInstanceMigration, status v1.VirtualMachineInstanceMigrationStatus) (*v1.VirtualMachineInstanceMigration, error) {
	if equality.Semantic.DeepEqual(m.Status, status) {
		return m, nil
	}
	updated := m.DeepCopy()
	updated.Status = status
	stored, err := c.client.KubevirtV1().VirtualMachineInstanceMigrations(m.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.written.Wrote(m.Namespace+"/"+m.Name, m.ResourceVersion)
	if status.Phase != m.Status.Phase {
		reason := ""
		if s := status.MigrationState; s != nil {
			reason = s.FailureReason
		}
		klog.FromContext(ctx).Info("Migration phase changed", "migration", klog.KObj(m), "vmi", m.Spec.VMIName,
			"from", m.Status.Phase, "to", status.Phase, "failureReason", reason)
	}
	return stored, nil
}

// releaseFinalizer removes the migration finalizer from m.
func (c *Controller) releaseFinalizer(ctx context.Context, m *v1.VirtualMachineInstanceMigration) error {
	if !slices.Contains(m.Finalizers, v1.VirtualMachineInstanceMigrationFinalizer) {
		return nil
	}
	updated := m.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool {
		return f == v1.VirtualMachineInstanceMigrationFinalizer
	})
	_, err := c.client.KubevirtV1().VirtualMachineInstanceMigrations(m.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		klog.FromContext(ctx).Info("Released the finalizer of a deleted migration", "migration", klog.KObj(m), "phase", m.Status.Phase)
	}
	return err
}
