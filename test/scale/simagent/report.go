package simagent

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// sync reports the VMI of key ("node|namespace/name") as the real node agent would: Running
// once Scheduled on the node, Succeeded once it is being deleted.
func (a *Agents) sync(ctx context.Context, key string) error {
	node, nsName, _ := strings.Cut(key, "|")
	ns, name, err := cache.SplitMetaNamespaceKey(nsName)
	if err != nil {
		return nil
	}
	vmi, err := a.listers[node].VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	status, ok := Next(vmi, node, metav1.Now())
	if !ok {
		return nil
	}
	updated := vmi.DeepCopy()
	updated.Status = status
	_, err = a.client.KubevirtV1().VirtualMachineInstances(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("reporting VMI %s: %w", nsName, err)
	}
	return nil
}

// Next is the status a node agent of node writes for vmi, and whether it writes one: Running
// (Ready) for a VMI Scheduled on the node, Succeeded for a running one being deleted (its
// guest shut down at once).
func Next(vmi *v1.VirtualMachineInstance, node string, now metav1.Time) (v1.VirtualMachineInstanceStatus, bool) {
	if vmi.Status.NodeName != node {
		return v1.VirtualMachineInstanceStatus{}, false
	}
	st := *vmi.Status.DeepCopy()
	switch {
	case vmi.DeletionTimestamp != nil && (st.Phase == v1.Scheduled || st.Phase == v1.Running):
		st.SetPhase(v1.Succeeded, now)
		st.Reason = ""
		st.RemoveCondition(v1.VirtualMachineInstanceReady)
	case vmi.DeletionTimestamp == nil && st.Phase == v1.Scheduled:
		st.SetPhase(v1.Running, now)
		st.Reason = ""
		st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}, now)
	default:
		return v1.VirtualMachineInstanceStatus{}, false
	}
	return st, true
}
