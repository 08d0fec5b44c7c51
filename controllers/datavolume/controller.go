package datavolume

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	cdiinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/cdi/v1beta1"
	cdilisters "github.com/vireo-dev/vireo/generated/listers/cdi/v1beta1"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// progressPeriod is how often a running import's progress is read (the issue asks for at
// least every 5 s).
const progressPeriod = 3 * time.Second

// Controller is the DataVolume reconciler.
type Controller struct {
	*reconcile.Loop
	client   versioned.Interface
	kube     kubernetes.Interface
	dvs      cdilisters.DataVolumeLister
	claims   corelisters.PersistentVolumeClaimLister
	pods     corelisters.PodLister
	classes  storagelisters.StorageClassLister
	opts     ImporterOptions
	progress func(ctx context.Context, pod *corev1.Pod) (cdiv1beta1.DataVolumeProgress, error)
	now      func() metav1.Time
	written  reconcile.WrittenVersions
}

// New wires the controller to its informers: DataVolumes, the claims and importer Pods it
// made (their informers may be filtered to those), and StorageClasses.
func New(client versioned.Interface, kube kubernetes.Interface, dvs cdiinformers.DataVolumeInformer, claims coreinformers.PersistentVolumeClaimInformer,
	pods coreinformers.PodInformer, classes storageinformers.StorageClassInformer, opts ImporterOptions) (*Controller, error) {
	c := &Controller{client: client, kube: kube, dvs: dvs.Lister(), claims: claims.Lister(), pods: pods.Lister(), classes: classes.Lister(),
		opts: opts, progress: readProgress, now: metav1.Now}
	c.Loop = reconcile.NewLoop("datavolume", c.sync, dvs.Informer().HasSynced, claims.Informer().HasSynced,
		pods.Informer().HasSynced, classes.Informer().HasSynced)
	if _, err := dvs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.Enqueue,
		UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{claims.Informer(), pods.Informer()} {
		if _, err := inf.AddEventHandler(c.OwnerHandlers("DataVolume")); err != nil {
			return nil, err
		}
	}
	// A clone's source Pod names its DataVolume in an annotation (no owner across namespaces).
	enqueueTarget := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if pod, ok := obj.(*corev1.Pod); ok && pod.Annotations[CloneTargetAnnotation] != "" {
			c.EnqueueKey(pod.Annotations[CloneTargetAnnotation])
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueTarget, UpdateFunc: func(_, obj any) { enqueueTarget(obj) }, DeleteFunc: enqueueTarget,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	dv, err := c.dvs.DataVolumes(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.Forget(key)
		// A clone's source Pod in another namespace has no owner to be collected with.
		return c.deleteSourcePods(ctx, key, "")
	}
	if err != nil || c.written.Stale(key, dv.ResourceVersion) || dv.DeletionTimestamp != nil {
		// Deleted: the garbage collector removes the claim and the Pod it owns.
		return err
	}
	obs, problem, err := c.observe(ctx, dv)
	if err != nil {
		return err
	}
	status := nextStatus(dv, obs, c.now())
	if problem != "" {
		setCondition(&status, cdiv1beta1.DataVolumeRunning, cdiv1beta1.ConditionFalse, "Error", problem, c.now())
	}
	switch status.Phase {
	case cdiv1beta1.ImportInProgress, cdiv1beta1.CloneInProgress, cdiv1beta1.UploadReady:
		c.EnqueueAfter(key, progressPeriod)
	}
	if dv, err = c.recordUploadNode(ctx, dv, obs.pod, &status); err != nil {
		return err
	}
	if err := c.writeStatus(ctx, dv, status); err != nil {
		return err
	}
	if ended(&status) && obs.pod != nil {
		// The outcome is recorded: the importer Pod goes (a failed one must not run on).
		err := c.kube.CoreV1().Pods(ns).Delete(ctx, obs.pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &obs.pod.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if crossNamespace(dv) == "" {
		return nil
	}
	// A clone across namespaces: its source Pod goes once the clone ended, and one left by a
	// DataVolume of the same name before this one goes at once.
	keep := dv.UID
	if ended(&status) {
		keep = ""
	}
	return c.deleteSourcePods(ctx, key, keep)
}

// observe finds (creating what is missing) dv's claim and importer Pod and the import's
// progress. problem explains what keeps the import from going on, for the Running condition.
func (c *Controller) observe(ctx context.Context, dv *cdiv1beta1.DataVolume) (obs observation, problem string, err error) {
	if ended(&dv.Status) {
		obs.pod, _ = c.ownPod(dv)
		return obs, "", nil
	}
	if obs.claim, problem, err = c.ensureClaim(ctx, dv); obs.claim == nil || err != nil {
		return obs, problem, err
	}
	obs.waitForFirstConsumer = c.waitsForFirstConsumer(obs.claim)
	pod, problem := c.ownPod(dv)
	if problem != "" {
		return obs, problem, nil
	}
	// A claim whose class waits for its first consumer binds when the VMI's launcher Pod is
	// scheduled (the VMI does not wait for such a DataVolume); the importer follows the volume
	// to that node, and the launcher waits until disk.img appears.
	// An upload Pod (also the target of a clone across namespaces) is the claim's first
	// consumer itself: nothing else would bind it.
	if pod == nil && (obs.claim.Status.Phase == corev1.ClaimBound || kindOf(dv) == sourceUpload || crossNamespace(dv) != "") {
		if problem := c.cloneSourceNotReady(dv); problem != "" {
			c.EnqueueAfter(dv.Namespace+"/"+dv.Name, progressPeriod)
			return obs, problem, nil
		}
		if pod, problem, err = c.createImporter(ctx, dv, obs.claim); err != nil || problem != "" {
			return obs, problem, err
		}
	}
	obs.pod = pod
	if obs.sourceFailed, problem, err = c.observeSource(ctx, dv, pod); err != nil || problem != "" {
		return obs, problem, err
	}
	if pod != nil && pod.Status.PodIP != "" && pod.Status.Phase == corev1.PodRunning {
		if p, err := c.progress(ctx, pod); err == nil {
			obs.progress = p
		} else {
			klog.FromContext(ctx).V(2).Info("Reading the import's progress", "pod", klog.KObj(pod), "err", err)
		}
	}
	return obs, "", nil
}

// recordUploadNode writes the node of dv's running upload Pod into its UploadNodeAnnotation,
// where vireo-apiserver looks for the node agent that relays the upload (it may not read
// Pods outside its namespace), and removes the annotation once the upload has ended. It
// returns dv as updated.
func (c *Controller) recordUploadNode(ctx context.Context, dv *cdiv1beta1.DataVolume, pod *corev1.Pod, status *cdiv1beta1.DataVolumeStatus) (*cdiv1beta1.DataVolume, error) {
	if kindOf(dv) != sourceUpload {
		return dv, nil
	}
	node := ""
	if pod != nil && !ended(status) && pod.Status.Phase == corev1.PodRunning {
		node = pod.Spec.NodeName
	}
	if dv.Annotations[v1.UploadNodeAnnotation] == node {
		return dv, nil
	}
	updated := dv.DeepCopy()
	if node == "" {
		delete(updated.Annotations, v1.UploadNodeAnnotation)
	} else {
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		updated.Annotations[v1.UploadNodeAnnotation] = node
	}
	written, err := c.client.CdiV1beta1().DataVolumes(dv.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return dv, err
	}
	c.written.Wrote(dv.Namespace+"/"+dv.Name, dv.ResourceVersion)
	return written, nil
}

// ensureClaim returns dv's claim, creating it first. A claim of that name that dv does not
// own is left alone and reported as the problem.
func (c *Controller) ensureClaim(ctx context.Context, dv *cdiv1beta1.DataVolume) (*corev1.PersistentVolumeClaim, string, error) {
	claim, err := c.claims.PersistentVolumeClaims(dv.Namespace).Get(dv.Name)
	if apierrors.IsNotFound(err) {
		sourceSize, problem, serr := c.sourceSize(ctx, dv)
		if serr != nil || problem != "" {
			return nil, problem, serr
		}
		want, rerr := Claim(dv, c.opts.FilesystemOverhead, sourceSize)
		if rerr != nil {
			return nil, rerr.Error(), nil
		}
		claim, err = c.kube.CoreV1().PersistentVolumeClaims(dv.Namespace).Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			claim, err = c.kube.CoreV1().PersistentVolumeClaims(dv.Namespace).Get(ctx, dv.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, "", err
	}
	if !metav1.IsControlledBy(claim, dv) {
		return nil, fmt.Sprintf("PersistentVolumeClaim %s already exists and does not belong to this DataVolume", claim.Name), nil
	}
	return claim, "", nil
}

// sourceSize is the requested size of the claim a clone copies (zero for other sources). The
// controller's claim informer sees only its own claims, so the source is read from the API.
func (c *Controller) sourceSize(ctx context.Context, dv *cdiv1beta1.DataVolume) (resource.Quantity, string, error) {
	src := dv.Spec.Source
	if src == nil || src.PVC == nil {
		return resource.Quantity{}, "", nil
	}
	ns := src.PVC.Namespace
	if ns == "" {
		ns = dv.Namespace
	}
	claim, err := c.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, src.PVC.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return resource.Quantity{}, fmt.Sprintf("the claim to clone, %s/%s, does not exist", ns, src.PVC.Name), nil
	}
	if err != nil {
		return resource.Quantity{}, "", err
	}
	return claim.Spec.Resources.Requests[corev1.ResourceStorage], "", nil
}

// cloneSourceNotReady says why a clone must wait: its source claim belongs to a DataVolume
// that has not been populated yet (copying it now would copy a half-written disk).
func (c *Controller) cloneSourceNotReady(dv *cdiv1beta1.DataVolume) string {
	src := dv.Spec.Source
	if src == nil || src.PVC == nil {
		return ""
	}
	ns := src.PVC.Namespace
	if ns == "" {
		ns = dv.Namespace
	}
	source, err := c.dvs.DataVolumes(ns).Get(src.PVC.Name)
	if err != nil || source.Status.Phase == cdiv1beta1.Succeeded {
		return ""
	}
	return fmt.Sprintf("waiting for the source DataVolume %s/%s to be populated (phase %s)", ns, source.Name, orPending(source.Status.Phase))
}

func orPending(p cdiv1beta1.DataVolumePhase) cdiv1beta1.DataVolumePhase {
	if p == "" {
		return cdiv1beta1.Pending
	}
	return p
}

// ownPod is dv's importer Pod from the cache, nil when there is none; a Pod of that name that
// dv does not own is the problem.
func (c *Controller) ownPod(dv *cdiv1beta1.DataVolume) (*corev1.Pod, string) {
	pod, err := c.pods.Pods(dv.Namespace).Get(ImporterPodName(dv))
	if err != nil {
		return nil, ""
	}
	if !metav1.IsControlledBy(pod, dv) {
		return nil, fmt.Sprintf("Pod %s already exists and does not belong to this DataVolume", pod.Name)
	}
	return pod, ""
}

// createImporter creates dv's importer Pod for its claim.
func (c *Controller) createImporter(ctx context.Context, dv *cdiv1beta1.DataVolume, claim *corev1.PersistentVolumeClaim) (*corev1.Pod, string, error) {
	capacity := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if q, ok := claim.Status.Capacity[corev1.ResourceStorage]; ok && claim.Status.Phase == corev1.ClaimBound {
		capacity = q
	}
	pod, err := ImporterPod(dv, claim, capacity.Value(), c.opts)
	if err != nil {
		return nil, err.Error(), nil
	}
	created, err := c.kube.CoreV1().Pods(dv.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = c.kube.CoreV1().Pods(dv.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && !metav1.IsControlledBy(created, dv) {
			return nil, fmt.Sprintf("Pod %s already exists and does not belong to this DataVolume", pod.Name), nil
		}
	}
	return created, "", err
}

// waitsForFirstConsumer says whether the claim's storage class binds only for a Pod using it.
func (c *Controller) waitsForFirstConsumer(claim *corev1.PersistentVolumeClaim) bool {
	if claim.Status.Phase == corev1.ClaimBound {
		return false
	}
	var class *storagev1.StorageClass
	if name := claim.Spec.StorageClassName; name != nil && *name != "" {
		class, _ = c.classes.Get(*name)
	}
	return class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// writeStatus writes status through /status when it differs from dv's.
func (c *Controller) writeStatus(ctx context.Context, dv *cdiv1beta1.DataVolume, status cdiv1beta1.DataVolumeStatus) error {
	if !statusChanged(&dv.Status, &status) {
		return nil
	}
	updated := dv.DeepCopy()
	updated.Status = status
	_, err := c.client.CdiV1beta1().DataVolumes(dv.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	c.written.Wrote(dv.Namespace+"/"+dv.Name, dv.ResourceVersion)
	if status.Phase != dv.Status.Phase {
		klog.FromContext(ctx).Info("DataVolume phase changed", "dataVolume", klog.KObj(dv), "from", dv.Status.Phase, "to", status.Phase)
	}
	return nil
}
