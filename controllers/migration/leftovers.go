package migration

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// leftoverRecheck is when an ended migration whose VMI the cache shows before this
// controller's last write of it is looked at again.
const leftoverRecheck = time.Second

// cleanUpEnded deletes what ended migration m left behind that its VMI does not run in: the
// target Pod of a failed migration, the source Pod of a succeeded one. The migration deletes
// them as it ends; this holds when that delete was lost (a Pod the cache had not seen yet, a
// write refused while kube-apiserver or its etcd was down), so an ended migration never
// leaves a second launcher Pod by the VMI.
func (c *Controller) cleanUpEnded(ctx context.Context, m *v1.VirtualMachineInstanceMigration) error {
	vmi, err := c.vmis.VirtualMachineInstances(m.Namespace).Get(m.Spec.VMIName)
	switch {
	case apierrors.IsNotFound(err):
		// The VMI controller deletes the Pods of a VMI that is gone.
		return nil
	case err != nil:
		return err
	case c.vmiWritten.Stale(m.Namespace+"/"+vmi.Name, vmi.ResourceVersion):
		c.EnqueueAfter(m.Namespace+"/"+m.Name, leftoverRecheck)
		return nil
	}
	target, err := c.pod(ctx, vmi, launcherpodapi.PodName(vmi.Name, string(m.UID)), m.UID, false)
	if err != nil {
		return err
	}
	var source *corev1.Pod
	if s := m.Status.MigrationState; s != nil && s.SourcePod != "" && m.Status.Phase == v1.MigrationSucceeded {
		if source, err = c.pod(ctx, vmi, s.SourcePod, "", false); err != nil {
			return err
		}
	}
	for _, pod := range leftovers(m, vmi, target, source) {
		if err := c.deletePod(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

// leftovers are the Pods ended migration m left that vmi does not run in and that no migration
// of vmi in flight uses: its target Pod when it failed, its source Pod when it succeeded (both
// nil when they do not exist or vmi does not control them).
func leftovers(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, target, source *corev1.Pod) []*corev1.Pod {
	inUse := map[string]bool{launcherpodapi.CurrentPodName(vmi): true}
	if s := vmi.Status.MigrationState; s != nil && !s.Completed && !s.Failed {
		inUse[s.SourcePod], inUse[s.TargetPod] = true, true
	}
	var out []*corev1.Pod
	if m.Status.Phase == v1.MigrationFailed && deletable(target) && !inUse[target.Name] {
		out = append(out, target)
	}
	if m.Status.Phase == v1.MigrationSucceeded && deletable(source) && !inUse[source.Name] {
		out = append(out, source)
	}
	return out
}
