package nodeagent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// launcherPod is the launcher Pod the VMI runs in on this node (launcherpodapi.CurrentPodName: a
// migration's source until it completed, then its target); else, while a migration to another
// node completes and the VMI has not moved yet, that migration's source Pod (whose last report
// says the guest left, and which may itself have been an earlier migration's target); else one
// the VMI's UID labels that is no migration's target.
func (a *Agent) launcherPod(vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	pods, err := a.podList.Pods(vmi.Namespace).List(labels.SelectorFromSet(labels.Set{v1.CreatedByLabel: string(vmi.UID)}))
	if err != nil {
		return nil, err
	}
	return pickLauncherPod(vmi, pods), nil
}

// confirmedLauncherPod is launcherPod, except that a Pod missing from this agent's cache is
// looked for in the API before it counts as gone: the cache can lag the Pod's creation (its
// watch re-established after kube-apiserver restarted) while the VMI already names it.
func (a *Agent) confirmedLauncherPod(ctx context.Context, vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	if pod, err := a.launcherPod(vmi); pod != nil || err != nil {
		return pod, err
	}
	list, err := a.kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{v1.CreatedByLabel: string(vmi.UID)}.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", a.opts.NodeName).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("the launcher Pod of VMI %s/%s is not in this agent's cache, and listing it failed: %w", vmi.Namespace, vmi.Name, err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pickLauncherPod(vmi, pods), nil
}

// pickLauncherPod chooses launcherPod's Pod among the Pods the VMI's UID labels.
func pickLauncherPod(vmi *v1.VirtualMachineInstance, pods []*corev1.Pod) *corev1.Pod {
	want, source := launcherpodapi.CurrentPodName(vmi), ""
	if s := vmi.Status.MigrationState; s != nil {
		source = s.SourcePod
	}
	var found, sourcePod *corev1.Pod
	for _, p := range pods {
		switch _, target := p.Labels[v1.MigrationJobLabel]; {
		case p.Name == want:
			return p
		case p.Name == source:
			sourcePod = p
		case !target:
			found = p
		}
	}
	if sourcePod != nil {
		return sourcePod
	}
	return found
}

// runningLauncher is the running VMI namespace/name and its launcher Pod on this node, or why
// there is none: 404 for a VMI not on this node, 409 for one whose launcher ended.
func (a *Agent) runningLauncher(namespace, name string) (*v1.VirtualMachineInstance, *corev1.Pod, *nodeagentapi.Error) {
	vmi, err := a.currentVMI(namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil, &nodeagentapi.Error{Code: http.StatusNotFound, Message: fmt.Sprintf("VMI %s/%s does not run on this node", namespace, name)}
	}
	if err != nil {
		return nil, nil, &nodeagentapi.Error{Code: http.StatusInternalServerError, Message: err.Error()}
	}
	if herr := runningPhase(vmi); herr != nil {
		return nil, nil, herr
	}
	pod, err := a.launcherPod(vmi)
	if err != nil {
		return nil, nil, &nodeagentapi.Error{Code: http.StatusInternalServerError, Message: err.Error()}
	}
	if launcherEnded(pod) {
		return nil, nil, &nodeagentapi.Error{Code: http.StatusConflict,
			Message: fmt.Sprintf("VMI %s/%s has no running launcher on this node: %s", namespace, name, podEndMessage(pod))}
	}
	return vmi, pod, nil
}

// currentVMI is VMI namespace/name as this node's informer holds it when that copy shows it
// Running; otherwise as vireo-apiserver has it now, if it is on this node. The informer can lag
// a status its caller has already read: this agent's own write of Running, read back through
// another vireo-apiserver replica before the watch event arrived here.
func (a *Agent) currentVMI(namespace, name string) (*v1.VirtualMachineInstance, error) {
	cached, err := a.vmis.VirtualMachineInstances(namespace).Get(name)
	if err == nil && cached.Status.Phase == v1.Running || err != nil && !apierrors.IsNotFound(err) {
		return cached, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	live, lerr := a.client.KubevirtV1().VirtualMachineInstances(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case lerr == nil && live.Status.NodeName == a.opts.NodeName:
		return live, nil
	case lerr == nil || apierrors.IsNotFound(lerr):
		return nil, apierrors.NewNotFound(v1.Resource("virtualmachineinstances"), name)
	case err != nil: // the informer's NotFound, the live read failing
		return nil, err
	}
	return cached, nil
}

// runningPhase refuses a VMI that is not running: 400 before it runs, 409 once it ended
// (KubeVirt's codes).
func runningPhase(vmi *v1.VirtualMachineInstance) *nodeagentapi.Error {
	switch vmi.Status.Phase {
	case v1.Running:
		return nil
	case v1.Succeeded, v1.Failed:
		return &nodeagentapi.Error{Code: http.StatusConflict, Message: fmt.Sprintf("VMI %s/%s has ended (phase %s)", vmi.Namespace, vmi.Name, vmi.Status.Phase)}
	default:
		return &nodeagentapi.Error{Code: http.StatusBadRequest, Message: fmt.Sprintf("VMI %s/%s is not running yet (phase %q)", vmi.Namespace, vmi.Name, vmi.Status.Phase)}
	}
}

// launcherFinder finds launchers for the streams (streams.Launchers).
type launcherFinder struct{ a *Agent }

func (f launcherFinder) Running(namespace, name string) (types.UID, *nodeagentapi.Error) {
	_, pod, herr := f.a.runningLauncher(namespace, name)
	if herr != nil {
		return "", herr
	}
	return pod.UID, nil
}

// EndMessage says why the console or VNC socket of launcher Pod podUID of VMI namespace/name
// ended: the guest left it by migration (as its launcher or the VMI says), or it stopped.
func (f launcherFinder) EndMessage(podUID types.UID, namespace, name string) string {
	if leftByMigration(f.a.sessions.Status(podUID)) {
		return nodeagentapi.CloseVMIMigrated
	}
	if vmi, err := f.a.vmis.VirtualMachineInstances(namespace).Get(name); err == nil && migratedAway(vmi, f.a.opts.NodeName) {
		return nodeagentapi.CloseVMIMigrated
	}
	return nodeagentapi.CloseVMIStopped
}

// leftByMigration reports whether a launcher's last report dom says its guest is leaving or
// left by migration.
func leftByMigration(dom *protocol.DomainStatus) bool {
	return dom != nil && (dom.Phase == protocol.DomainMigrated || dom.Migration != nil && dom.Migration.UID != "" &&
		(dom.Migration.Phase == protocol.MigrationRunning || dom.Migration.Phase == protocol.MigrationCompleted))
}

// migratedAway reports whether vmi was leaving node by a migration to another node: one from
// this node that ran and had not failed, the VMI not being deleted.
func migratedAway(vmi *v1.VirtualMachineInstance, node string) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.SourceNode == node && ms.TargetNode != "" && ms.TargetNode != node &&
		ms.StartTimestamp != nil && !ms.Failed && vmi.DeletionTimestamp == nil
}

// endStreamsOfGone ends the stream sessions of VMI namespace/name, which is no longer on this
// node: deleted, or moved to another node by migration. A VMI that migrated leaves this
// agent's informer (it lists this node's VMIs) often before the source launcher's sockets
// close; its sessions end saying so when one of its launchers here reports the guest leaving.
func (a *Agent) endStreamsOfGone(namespace, name string) {
	msg := nodeagentapi.CloseVMIStopped
	pods, _ := a.podList.Pods(namespace).List(labels.SelectorFromSet(labels.Set{v1.AppLabel: v1.LauncherApp}))
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "VirtualMachineInstance" && ref.Name == name && leftByMigration(a.sessions.Status(p.UID)) {
			msg = nodeagentapi.CloseVMIMigrated
		}
	}
	a.streams.EndVMI(namespace, name, msg)
}
