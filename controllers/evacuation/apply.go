package evacuation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/migrationretry"
)

// syncBudget creates, repairs or deletes vmi's PodDisruptionBudget as NeedsBudget says. A
// budget of that name that the VMI does not control is left alone.
func (c *Controller) syncBudget(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	want := NeedsBudget(vmi)
	have, err := c.budgets.PodDisruptionBudgets(vmi.Namespace).Get(BudgetName(vmi))
	switch {
	case apierrors.IsNotFound(err):
		have = nil
	case err != nil:
		return err
	case !metav1.IsControlledBy(have, vmi):
		klog.FromContext(ctx).Info("PodDisruptionBudget of the VMI's name is not the VMI's; leaving it alone",
			"vmi", klog.KObj(vmi), "podDisruptionBudget", have.Name)
		return nil
	}
	budgets := c.kube.PolicyV1().PodDisruptionBudgets(vmi.Namespace)
	switch {
	case want && have == nil:
		_, err := budgets.Create(ctx, Budget(vmi), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// Not in this controller's (label-filtered) cache: its labels were changed.
			// Repairing them would need a read; the existing budget still protects the Pods.
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating the PodDisruptionBudget of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("Created PodDisruptionBudget", "vmi", klog.KObj(vmi), "podDisruptionBudget", BudgetName(vmi))
	case want && have.DeletionTimestamp == nil:
		desired := Budget(vmi)
		if equality.Semantic.DeepEqual(have.Spec, desired.Spec) && have.Labels[v1.CreatedByLabel] == string(vmi.UID) {
			return nil
		}
		updated := have.DeepCopy()
		updated.Spec = desired.Spec
		if updated.Labels == nil {
			updated.Labels = map[string]string{}
		}
		updated.Labels[v1.CreatedByLabel] = string(vmi.UID)
		if _, err := budgets.Update(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("repairing the PodDisruptionBudget of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
		}
	case !want && have != nil && have.DeletionTimestamp == nil:
		err := budgets.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the PodDisruptionBudget of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("Deleted PodDisruptionBudget", "vmi", klog.KObj(vmi), "podDisruptionBudget", have.Name)
	}
	return nil
}

// syncEvacuation creates an evacuation migration for vmi when Decide says so, and looks at the
// VMI again when its back-off runs out.
func (c *Controller) syncEvacuation(ctx context.Context, key string, vmi *v1.VirtualMachineInstance) error {
	now := c.now()
	known := func(name string) bool {
		_, err := c.migrations.VirtualMachineInstanceMigrations(vmi.Namespace).Get(name)
		return err == nil
	}
	if wait := c.created.pending(key, now, known); wait > 0 {
		// The migration's arrival in the informer requeues the VMI.
		c.EnqueueAfter(key, wait)
		return nil
	}
	if vmi.Status.NodeName == "" {
		return nil
	}
	node, err := c.nodes.Get(vmi.Status.NodeName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := Decide(vmi, node, c.migrationsOf(vmi), now)
	if d.RetryAfter > 0 {
		klog.FromContext(ctx).V(2).Info("Evacuation migration backing off", "vmi", klog.KObj(vmi), "node", node.Name, "retryAfter", d.RetryAfter)
		c.EnqueueAfter(key, d.RetryAfter)
		return nil
	}
	if !d.Migrate {
		return nil
	}
	m, err := c.client.KubevirtV1().VirtualMachineInstanceMigrations(vmi.Namespace).Create(ctx, Migration(vmi, node.Name), metav1.CreateOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		// Refused by the server's migration admission (another migration in flight that the
		// informer has not delivered yet, or the VMI changed): its change requeues the VMI;
		// look again after the base back-off in any case, without a hot loop.
		klog.FromContext(ctx).Info("Evacuation migration refused; retrying later", "vmi", klog.KObj(vmi), "node", node.Name,
			"retryAfter", migrationretry.BaseBackoff, "err", err)
		c.EnqueueAfter(key, migrationretry.BaseBackoff)
		return nil
	case err != nil:
		return fmt.Errorf("creating the evacuation migration of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	c.created.add(key, m.Name, now)
	klog.FromContext(ctx).Info("Evacuating VMI off cordoned node", "vmi", klog.KObj(vmi), "node", node.Name, "migration", m.Name)
	return nil
}
