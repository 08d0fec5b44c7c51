// Package migration reconciles VirtualMachineInstanceMigrations: it creates a migration's
// target launcher Pod within the cluster's parallel limits, records the migration in the VMI's
// status.migrationState (the contract with the node agents, which prepare the target, run the
// transfer and report its outcome there), moves the migration through its phases as the
// target Pod and the node agents' reports allow, moves the VMI to its target Pod and node once
// the transfer completed, and cleans up after failures. Deleting a migration aborts it; its
// finalizer is released once it has ended.
//
// The phase computation (decide) is a pure function of the migration, its VMI, its target Pod
// and the time; the controller gathers its input and carries out its decision (apply.go).
package migration

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// Indexes of the migration informer.
const (
	// byUID indexes migrations by UID (a target Pod's MigrationJobLabel).
	byUID = "migrationUID"
	// byVMI indexes migrations by "namespace/spec.vmiName".
	byVMI = "vmi"
)

// Controller is the migration reconciler.
type Controller struct {
	*reconcile.Loop
	client     versioned.Interface
	kube       kubernetes.Interface
	migrations vireolisters.VirtualMachineInstanceMigrationLister
	indexer    cache.Indexer
	vmis       vireolisters.VirtualMachineInstanceLister
	pods       corelisters.PodLister
	settings   *clusterconfig.Config
	policies   *Policies
	launcher   launcherpod.Options
	now        func() metav1.Time
	// written and vmiWritten are the migrations and VMIs this controller wrote, until the
	// informers deliver the writes.
	written, vmiWritten reconcile.WrittenVersions
	// starts serialises the starts of Pending migrations (the parallel limits).
	starts admissions
}

// New wires the controller to its informers: migrations, VMIs and launcher Pods (shared with
// the VMI controller). settings gives the parallel limits; launcher renders target Pods as the
// VMI controller renders launcher Pods.
func New(client versioned.Interface, kube kubernetes.Interface, migrations vireoinformers.VirtualMachineInstanceMigrationInformer,
	vmis vireoinformers.VirtualMachineInstanceInformer, pods coreinformers.PodInformer, settings *clusterconfig.Config,
	policies *Policies, launcher launcherpod.Options) (*Controller, error) {
	if err := migrations.Informer().AddIndexers(cache.Indexers{byUID: indexByUID, byVMI: indexByVMI}); err != nil {
		return nil, err
	}
	c := &Controller{client: client, kube: kube, migrations: migrations.Lister(), indexer: migrations.Informer().GetIndexer(),
		vmis: vmis.Lister(), pods: pods.Lister(), settings: settings, policies: policies, launcher: launcher, now: metav1.Now}
	synced := append([]cache.InformerSynced{migrations.Informer().HasSynced, vmis.Informer().HasSynced,
		pods.Informer().HasSynced, settings.HasSynced}, policies.synced...)
	c.Loop = reconcile.NewLoop("migration", c.sync, synced...)
	if _, err := migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.Enqueue,
		UpdateFunc: func(_, obj any) { c.Enqueue(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandler(handleAll(c.enqueueForVMI)); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(handleAll(c.enqueueForPod)); err != nil {
		return nil, err
	}
	return c, nil
}

// handleAll calls f with the object (or its tombstone's) of every add, update and delete.
func handleAll(f func(obj any)) cache.ResourceEventHandlerFuncs {
	unwrap := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		f(obj)
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: unwrap, UpdateFunc: func(_, obj any) { unwrap(obj) }, DeleteFunc: unwrap}
}

func indexByUID(obj any) ([]string, error) {
	m, ok := obj.(*v1.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil
	}
	return []string{string(m.UID)}, nil
}

func indexByVMI(obj any) ([]string, error) {
	m, ok := obj.(*v1.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil
	}
	return []string{m.Namespace + "/" + m.Spec.VMIName}, nil
}

// enqueueForVMI queues the migrations of a VMI that still have something to do.
func (c *Controller) enqueueForVMI(obj any) {
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		return
	}
	c.enqueueIndexed(byVMI, vmi.Namespace+"/"+vmi.Name, false)
}

// enqueueForPod queues the migration a target Pod belongs to, ended ones too: an ended
// migration deletes a target Pod it left behind.
func (c *Controller) enqueueForPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[v1.MigrationJobLabel] == "" {
		return
	}
	c.enqueueIndexed(byUID, pod.Labels[v1.MigrationJobLabel], true)
}

// enqueueIndexed queues the migrations the index holds under value that still have something
// to do; withEnded queues the ended ones too.
func (c *Controller) enqueueIndexed(index, value string, withEnded bool) {
	objs, err := c.indexer.ByIndex(index, value)
	if err != nil {
		return
	}
	for _, obj := range objs {
		if m, ok := obj.(*v1.VirtualMachineInstanceMigration); ok && (withEnded || !ended(m.Status.Phase) || m.DeletionTimestamp != nil) {
			c.EnqueueKey(m.Namespace + "/" + m.Name)
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	m, err := c.migrations.VirtualMachineInstanceMigrations(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.written.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if c.written.Stale(key, m.ResourceVersion) {
		// The cache has not seen this controller's last write yet; its update requeues.
		return nil
	}
	in := input{m: m, launcher: c.launcher, now: c.now()}
	if ended(m.Status.Phase) {
		// What it left behind goes before its finalizer does.
		if err := c.cleanUpEnded(ctx, m); err != nil {
			return err
		}
		return c.apply(ctx, in, decide(in))
	}
	if stale, err := c.gather(ctx, &in); stale || err != nil {
		return err
	}
	if in.vmi == nil || !starting(m, in.vmi) {
		return c.apply(ctx, in, decide(in))
	}
	// A start: the limits count the other migrations, so one start at a time.
	c.starts.mu.Lock()
	defer c.starts.mu.Unlock()
	all, err := c.migrations.List(labels.Everything())
	if err != nil {
		return err
	}
	in.inFlight = c.starts.inFlight(all, m.UID)
	in.limits = c.settings.Get().Migrations
	if in.policy, err = c.policies.For(in.vmi); err != nil {
		return err
	}
	d := decide(in)
	if err := c.apply(ctx, in, d); err != nil {
		return err
	}
	if counts(d.status.Phase) {
		c.starts.admit(m.UID, in.vmi.Status.NodeName)
	}
	return nil
}

// starting reports whether migration m of vmi may be about to start: it is Pending and vmi
// holds no state of it yet.
func starting(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) bool {
	pending := m.Status.Phase == v1.MigrationPending || m.Status.Phase == v1.MigrationPhaseUnset
	s := vmi.Status.MigrationState
	return pending && m.DeletionTimestamp == nil && (s == nil || s.MigrationUID != m.UID)
}

// gather fills in the migration's VMI and Pods. It reports stale when the VMI cache has not
// seen this controller's last write of the VMI yet (its update requeues the migration).
func (c *Controller) gather(ctx context.Context, in *input) (stale bool, err error) {
	m := in.m
	vmi, err := c.vmis.VirtualMachineInstances(m.Namespace).Get(m.Spec.VMIName)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	case c.vmiWritten.Stale(m.Namespace+"/"+vmi.Name, vmi.ResourceVersion):
		return true, nil
	}
	in.vmi = vmi
	pending := m.Status.Phase == v1.MigrationPending || m.Status.Phase == v1.MigrationPhaseUnset
	if in.target, err = c.pod(ctx, vmi, launcherpodapi.PodName(vmi.Name, string(m.UID)), m.UID, !pending); err != nil {
		return false, err
	}
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID == m.UID && s.Completed && !s.Failed && s.SourcePod != "" {
		if in.source, err = c.pod(ctx, vmi, s.SourcePod, "", false); err != nil {
			return false, err
		}
	}
	if in.target == nil {
		if in.running, err = c.pod(ctx, vmi, launcherpodapi.CurrentPodName(vmi), "", false); err != nil {
			return false, err
		}
	}
	return false, nil
}

// pod returns the Pod called name that vmi controls (and, with a migration UID, that is that
// migration's target), nil when there is none. With live, a Pod the cache lacks is read from
// the API: the Pod informer can lag behind the VMI and migration informers.
func (c *Controller) pod(ctx context.Context, vmi *v1.VirtualMachineInstance, name string, migration types.UID, live bool) (*corev1.Pod, error) {
	pod, err := c.pods.Pods(vmi.Namespace).Get(name)
	if apierrors.IsNotFound(err) && live {
		pod, err = c.kube.CoreV1().Pods(vmi.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(pod, vmi), migration != "" && pod.Labels[v1.MigrationJobLabel] != string(migration):
		return nil, nil
	}
	return pod, nil
}
