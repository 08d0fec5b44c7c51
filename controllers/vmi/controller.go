// Package vmi reconciles VirtualMachineInstances: it creates one launcher Pod per VMI, moves
// the VMI through Pending -> Scheduling -> Scheduled as the Pod is scheduled and starts (the
// node agent takes it from there), fails it when its current Pod fails or disappears (after a
// live migration, the migration's target Pod), deletes its Pods once the VMI ends or is
// deleted, and then releases the VMI's finalizer. It refuses to start VMIs that ask for what
// Vireo cannot run yet.
package vmi

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	cdiinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/cdi/v1beta1"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	cdilisters "github.com/vireo-dev/vireo/generated/listers/cdi/v1beta1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Controller is the VMI reconciler.
type Controller struct {
	*reconcile.Loop
	client versioned.Interface
	kube   kubernetes.Interface
	vmis   vireolisters.VirtualMachineInstanceLister
	pods   corelisters.PodLister
	dvs    cdilisters.DataVolumeLister
	// failedMounts are the kubelets' FailedMount events, indexed by podUIDIndex.
	failedMounts cache.Indexer
	launcher     launcherpod.Options
	// pinner pins the VMI's image tags to digests before its Pod is created (nil: none).
	pinner  ImagePinner
	now     func() metav1.Time
	written reconcile.WrittenVersions
}

// ImagePinner returns the digest references a VMI's launcher Pod mounts instead of its tags,
// by volume name (launcherpod.Options.PinnedImages).
type ImagePinner interface {
	Pin(ctx context.Context, vmi *v1.VirtualMachineInstance) map[string]string
}

// New wires the controller to its informers (failedMounts: of the events FailedMountSelector
// selects); launcher configures the launcher Pods it creates, pinner (nil: none) the digests
// their images are pinned to.
func New(client versioned.Interface, kube kubernetes.Interface, vmis vireoinformers.VirtualMachineInstanceInformer,
	pods coreinformers.PodInformer, dvs cdiinformers.DataVolumeInformer, failedMounts coreinformers.EventInformer,
	launcher launcherpod.Options, pinner ImagePinner) (*Controller, error) {
	if err := failedMounts.Informer().AddIndexers(cache.Indexers{podUIDIndex: indexByPodUID}); err != nil {
		return nil, err
	}
	c := &Controller{client: client, kube: kube, vmis: vmis.Lister(), pods: pods.Lister(), dvs: dvs.Lister(),
		failedMounts: failedMounts.Informer().GetIndexer(), launcher: launcher, pinner: pinner, now: metav1.Now}
	c.Loop = reconcile.NewProgressFirstLoop("vmi", c.sync, c.inProgress, vmis.Informer().HasSynced, pods.Informer().HasSynced,
		dvs.Informer().HasSynced, failedMounts.Informer().HasSynced)
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.Enqueue,
		UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(c.OwnerHandlers("VirtualMachineInstance")); err != nil {
		return nil, err
	}
	if _, err := failedMounts.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueVMIOfEvent, UpdateFunc: func(_, obj any) { c.enqueueVMIOfEvent(obj) },
	}); err != nil {
		return nil, err
	}
	dvChanged := func(obj any) { c.enqueueUsersOf(obj) }
	if _, err := dvs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: dvChanged, UpdateFunc: func(_, obj any) { dvChanged(obj) }, DeleteFunc: dvChanged,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// inProgress says whether the controller acted on VMI key already (it is past Pending, or is
// being deleted or gone): its next step is queued before VMIs nobody acted on yet, so that under
// a flood of creations the VMIs started first are not held behind every VMI created since.
// vireo-apiserver creates every VMI Pending (as KubeVirt records it), so Pending is new work
// too; so is a VMI that waits, Pending, for its DataVolumes (their changes requeue it).
func (c *Controller) inProgress(key string) bool {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false
	}
	vmi, err := c.vmis.VirtualMachineInstances(ns).Get(name)
	if err != nil {
		return true
	}
	return vmi.DeletionTimestamp != nil || (vmi.Status.Phase != v1.VmPhaseUnset && vmi.Status.Phase != v1.Pending)
}

// enqueueUsersOf queues the VMIs of a DataVolume's namespace that use it, waiting or not.
func (c *Controller) enqueueUsersOf(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	dv, ok := obj.(*cdiv1beta1.DataVolume)
	if !ok {
		return
	}
	vmis, err := c.vmis.VirtualMachineInstances(dv.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, vmi := range vmis {
		for _, vol := range vmi.Spec.Volumes {
			if vol.DataVolume != nil && vol.DataVolume.Name == dv.Name {
				c.EnqueueKey(vmi.Namespace + "/" + vmi.Name)
				break
			}
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
		c.written.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if c.written.Stale(key, vmi.ResourceVersion) {
		// The cache has not seen this controller's last write yet; its update requeues the VMI.
		return nil
	}
	if refused, err := c.refuseUnsupported(ctx, vmi); refused || err != nil {
		return err
	}
	pods, err := c.launcherPods(vmi)
	if err != nil {
		return err
	}
	if vmi.DeletionTimestamp != nil || isFinal(vmi.Status.Phase) {
		return c.cleanUp(ctx, vmi, pods)
	}
	pod := currentPod(vmi, pods)
	var gate *v1.VirtualMachineInstanceCondition
	switch {
	case pod == nil && (vmi.Status.Phase == v1.VmPhaseUnset || vmi.Status.Phase == v1.Pending):
		if gate, err = dataVolumeGate(vmi, c.dvs.DataVolumes(ns).Get); err != nil {
			return err
		}
		if gate != nil && gate.Status == v1.ConditionFalse {
			// Waits, Pending, until its DataVolumes are populated; their changes requeue it.
			st := *vmi.Status.DeepCopy()
			st.SetPhase(v1.Pending, c.now())
			withDataVolumes(&st, gate, c.now())
			return c.writeStatus(ctx, vmi, st)
		}
		if pod, err = c.createPod(ctx, vmi); pod == nil {
			return err
		}
	case pod == nil:
		// The Pod informer (kube-apiserver) can lag behind the VMI informer (vireo-apiserver):
		// only the API may say the Pod is gone, which fails the VMI.
		if pod, err = c.livePod(ctx, vmi); err != nil {
			return err
		}
	}
	status, recheck := nextStatus(vmi, pod, c.now())
	if err := c.withLiveMigratable(ctx, vmi, &status, c.now()); err != nil {
		return err
	}
	withDataVolumes(&status, gate, c.now())
	problem, mountRecheck := c.mountProblem(vmi, pod)
	withMountProblem(&status, problem, c.now())
	if recheck == 0 || (mountRecheck > 0 && mountRecheck < recheck) {
		recheck = mountRecheck
	}
	if recheck > 0 {
		c.EnqueueAfter(key, recheck)
	}
	return c.writeStatus(ctx, vmi, status)
}

// isFinal reports whether a VMI in this phase has ended for good.
func isFinal(phase v1.VirtualMachineInstancePhase) bool {
	return phase == v1.Succeeded || phase == v1.Failed
}

// currentPod is the launcher Pod the VMI runs in now, if it exists: its first Pod, or after a
// live migration the migration's target Pod (launcherpodapi.CurrentPodName). A migration's other
// Pod (its target while it runs, the source once it completed) is the migration controller's.
func currentPod(vmi *v1.VirtualMachineInstance, pods []*corev1.Pod) *corev1.Pod {
	want := launcherpodapi.CurrentPodName(vmi)
	for _, p := range pods {
		if p.Name == want {
			return p
		}
	}
	return nil
}

// createPod creates the VMI's launcher Pod and returns it. A VMI that cannot be rendered fails;
// a Pod the API refuses leaves the VMI Pending with Synchronized False and is retried.
func (c *Controller) createPod(ctx context.Context, vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	opts := c.launcher
	if c.pinner != nil {
		opts.PinnedImages = c.pinner.Pin(ctx, vmi)
	}
	pod, err := launcherpod.Render(vmi, opts)
	if err != nil {
		st := *vmi.Status.DeepCopy()
		fail(&st, v1.ReasonInvalidSpec, err.Error(), c.now())
		return nil, c.writeStatus(ctx, vmi, st)
	}
	created, err := c.kube.CoreV1().Pods(vmi.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Made by an earlier sync whose Pod the cache has not seen yet.
		created, err = c.kube.CoreV1().Pods(vmi.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && !metav1.IsControlledBy(created, vmi) {
			err = fmt.Errorf("pod %s/%s exists but does not belong to VMI %s (uid %s)", created.Namespace, created.Name, vmi.Name, vmi.UID)
		}
	}
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Created launcher Pod", "vmi", klog.KObj(vmi), "pod", klog.KObj(created))
		return created, nil
	}
	st := *vmi.Status.DeepCopy()
	st.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized,
		Status: v1.ConditionFalse, Reason: v1.ReasonFailedCreate, Message: "creating the launcher Pod: " + err.Error()}, c.now())
	if werr := c.writeStatus(ctx, vmi, st); werr != nil {
		return nil, werr
	}
	return nil, err
}

// livePod reads the VMI's current launcher Pod from the API (nil when it does not exist).
func (c *Controller) livePod(ctx context.Context, vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	pod, err := c.kube.CoreV1().Pods(vmi.Namespace).Get(ctx, launcherpodapi.CurrentPodName(vmi), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(pod, vmi):
		return nil, nil
	}
	return pod, nil
}

// cleanUp deletes the launcher Pods of a VMI that ended or is being deleted, and releases the
// VMI's finalizer once none is left. Deleting a running guest's Pod is how a VMI deletion
// reaches the launcher: it shuts the guest down (ACPI, then destroy after the VMI's grace
// period) before the Pod's own grace (the VMI's + 15 s) runs out; the node agent does the same
// from its side and reports the outcome.
func (c *Controller) cleanUp(ctx context.Context, vmi *v1.VirtualMachineInstance, pods []*corev1.Pod) error {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := c.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	pods = slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return abandoned(vmi, p) })
	if len(pods) > 0 || !slices.ContainsFunc(vmi.Finalizers, isVMIFinalizer) {
		// The Pods' deletion requeues us.
		return nil
	}
	return c.releaseFinalizer(ctx, vmi)
}

// abandoned reports whether the launcher Pod, being deleted on a node that did not stop it
// (the VMI failed NodeUnresponsive), no longer holds the VMI's deletion back: when the VMI
// keeps nothing on shared storage, a guest still running on a node cut off harms no one
// (kube-apiserver deletes the Pod once its node returns or is deleted), and the VMI's VM can
// start it again elsewhere. A VMI with claims waits until the node confirms or its Node object
// is deleted (after fencing): two guests must never write one disk.
func abandoned(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && vmi.Status.Reason == v1.ReasonNodeUnresponsive && !sharesStorage(vmi)
}

// sharesStorage reports whether the VMI has a volume that may outlive its Pod where another
// Pod could open it: any volume but those made for the Pod alone (a containerDisk, cloud-init,
// an emptyDisk, a ConfigMap, Secret, ServiceAccount, DownwardAPI or sysprep disk, the downward
// metrics). A source not known here counts as shared.
func sharesStorage(vmi *v1.VirtualMachineInstance) bool {
	return slices.ContainsFunc(vmi.Spec.Volumes, func(vol v1.Volume) bool {
		s := vol.VolumeSource
		podOnly := s.ContainerDisk != nil || s.CloudInitNoCloud != nil || s.CloudInitConfigDrive != nil || s.EmptyDisk != nil ||
			s.ConfigMap != nil || s.Secret != nil || s.ServiceAccount != nil || s.DownwardAPI != nil || s.Sysprep != nil ||
			s.DownwardMetrics != nil
		return !podOnly
	})
}

// writeStatus writes status through /status when it differs from the VMI's.
func (c *Controller) writeStatus(ctx context.Context, vmi *v1.VirtualMachineInstance, status v1.VirtualMachineInstanceStatus) error {
	_, err := reconcile.WriteVMIStatus(ctx, c.client, &c.written, vmi, status)
	return err
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
