package workloadupdate

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// syncLabel puts the outdated label on vmi, or takes it off, as outdated says.
func (c *Controller) syncLabel(ctx context.Context, vmi *v1.VirtualMachineInstance, outdated bool) error {
	if _, has := vmi.Labels[v1.OutdatedLauncherImageLabel]; has == outdated {
		return nil
	}
	value := "null"
	if outdated {
		value = `""`
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}}}`, v1.OutdatedLauncherImageLabel, value)
	_, err := c.client.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return failed(err, fmt.Sprintf("setting the label %s (outdated: %t)", v1.OutdatedLauncherImageLabel, outdated), vmi)
}

// syncCount records n in kv's status.outdatedVirtualMachineInstanceWorkloads (nothing without
// a KubeVirt object).
func (c *Controller) syncCount(ctx context.Context, kv *v1.KubeVirt, n int) error {
	if kv == nil {
		return nil
	}
	if cur := kv.Status.OutdatedVirtualMachineInstanceWorkloads; cur != nil && int(*cur) == n {
		return nil
	}
	patch := fmt.Appendf(nil, `{"status":{"outdatedVirtualMachineInstanceWorkloads":%d}}`, n)
	_, err := c.client.KubevirtV1().KubeVirts(kv.Namespace).Patch(ctx, kv.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("recording %d outdated VMIs in the status of KubeVirt %s/%s: %w", n, kv.Namespace, kv.Name, err)
	}
	return nil
}

// nodeAgentsRolledOut reports whether the node agents' DaemonSet has rolled out: every node it
// runs on has a current, available node agent. It says why not.
func (c *Controller) nodeAgentsRolledOut(ctx context.Context) (bool, string, error) {
	if c.opts.NodeAgentDaemonSet == "" {
		return true, "", nil
	}
	ds, err := c.kube.AppsV1().DaemonSets(v1.InstallNamespace).Get(ctx, c.opts.NodeAgentDaemonSet, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, "", nil
	}
	if err != nil {
		return false, "reading the node agents' DaemonSet", err
	}
	st := ds.Status
	switch {
	case st.ObservedGeneration < ds.Generation:
		return false, "the DaemonSet's change is not observed yet", nil
	case st.UpdatedNumberScheduled < st.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d of %d node agents updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled), nil
	case st.NumberAvailable < st.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d of %d node agents available", st.NumberAvailable, st.DesiredNumberScheduled), nil
	}
	return true, "", nil
}

// migrate creates a workload update migration of vmi.
func (c *Controller) migrate(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	m := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: MigrationGenerateName,
			Namespace:    vmi.Namespace,
			Labels:       map[string]string{v1.MigrationSelectorLabel: vmi.Name},
			Annotations:  map[string]string{v1.WorkloadUpdateMigrationAnnotation: ""},
		},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi.Name},
	}
	created, err := c.client.KubevirtV1().VirtualMachineInstanceMigrations(vmi.Namespace).Create(ctx, m, metav1.CreateOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		// Refused by the server's migration admission (another migration the cache does not
		// show yet, or the VMI changed): looked at again after the hold.
		c.remember(vmi)
		klog.FromContext(ctx).Info("Workload update migration refused; retrying later", "vmi", klog.KObj(vmi), "err", err)
		return nil
	case err != nil:
		return failed(err, "creating the workload update migration", vmi)
	}
	c.remember(vmi)
	klog.FromContext(ctx).Info("Created migration for automated workload update", "vmi", klog.KObj(vmi), "migration", created.Name,
		"from", vmi.Status.LauncherContainerImageVersion, "to", c.opts.LauncherImage)
	return nil
}

// evict evicts vmi's launcher Pod on its node through the eviction API, so that the Pod
// disruption budgets apply (a VMI whose eviction must live-migrate it is not evicted).
func (c *Controller) evict(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	pods, err := c.pods.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{v1.CreatedByLabel: string(vmi.UID)}))
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.Spec.NodeName != vmi.Status.NodeName || pod.DeletionTimestamp != nil {
			continue
		}
		c.remember(vmi)
		eviction := &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
		}
		err := c.kube.PolicyV1().Evictions(pod.Namespace).Evict(ctx, eviction)
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			return nil // gone or replaced since
		case apierrors.IsTooManyRequests(err):
			klog.FromContext(ctx).Info("Workload update eviction refused by a disruption budget", "vmi", klog.KObj(vmi), "pod", pod.Name, "err", err)
			return nil
		case err != nil:
			return failed(err, "evicting the launcher Pod "+pod.Name, vmi)
		}
		klog.FromContext(ctx).Info("Evicted launcher Pod for automated workload update", "vmi", klog.KObj(vmi), "pod", pod.Name,
			"from", vmi.Status.LauncherContainerImageVersion, "to", c.opts.LauncherImage)
		return nil
	}
	return nil
}
