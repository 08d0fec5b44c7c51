// Package workloadupdate moves guests that an upgrade left in a launcher of the release before
// to the current launcher, as KubeVirt's workload updater does, when the KubeVirt object's
// spec.workloadUpdateStrategy asks for it (by default it does not): live-migratable guests by
// a VirtualMachineInstanceMigration (annotated kubevirt.io/workloadUpdateMigration), the
// others by evicting their launcher Pods in batches. It starts only once the node agents'
// DaemonSet has rolled out, so that a guest is never moved onto a node whose agent is still of
// the release before.
//
// Whatever the strategy, it keeps KubeVirt's label kubevirt.io/outdatedLauncherImage on the VMIs
// whose launcher is not the one vireo-controller creates Pods with, and their count in the
// KubeVirt object's status.outdatedVirtualMachineInstanceWorkloads.
//
// The decisions (Outdated, Decide) are pure functions; the controller gathers their input from
// informers and carries them out.
package workloadupdate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/migrationretry"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/reconcile"
)

// passKey is the loop's one key: every pass looks at all VMIs.
const passKey = "workload-updates"

// debounce gathers the changes of a moment into one pass.
const debounce = time.Second

// actedHold is how long a VMI just migrated or evicted is left alone while the caches do not
// show the effect yet.
const actedHold = time.Minute

// rolloutPoll is how often a pass looks again while the node agents roll out.
const rolloutPoll = 10 * time.Second

// Options configure the controller.
type Options struct {
	// LauncherImage is the image vireo-controller creates launcher Pods with: the current one.
	LauncherImage string
	// NodeAgentDaemonSet names the node agents' DaemonSet in the installation's namespace; moves
	// wait until it has rolled out. Empty, or a DaemonSet that does not exist: nothing to wait for.
	NodeAgentDaemonSet string
}

// Controller keeps the outdated label and count, and moves outdated guests.
type Controller struct {
	*reconcile.Loop
	client     versioned.Interface
	kube       kubernetes.Interface
	vmis       vireolisters.VirtualMachineInstanceLister
	migrations vireolisters.VirtualMachineInstanceMigrationLister
	pods       corelisters.PodLister
	settings   *clusterconfig.Config
	opts       Options
	now        func() time.Time

	mu sync.Mutex
	// acted holds when each VMI (by key) was last migrated or evicted.
	acted map[string]time.Time
	// lastEvictions is when the last batch of evictions was made.
	lastEvictions time.Time
}

// New wires the controller to the shared VMI and migration informers, the launcher Pods'
// informer and the settings.
func New(client versioned.Interface, kube kubernetes.Interface, vmis vireoinformers.VirtualMachineInstanceInformer,
	migrations vireoinformers.VirtualMachineInstanceMigrationInformer, pods coreinformers.PodInformer,
	settings *clusterconfig.Config, opts Options) (*Controller, error) {
	c := &Controller{client: client, kube: kube, vmis: vmis.Lister(), migrations: migrations.Lister(), pods: pods.Lister(),
		settings: settings, opts: opts, now: time.Now, acted: map[string]time.Time{}}
	c.Loop = reconcile.NewLoop("workloadupdate", c.sync, vmis.Informer().HasSynced, migrations.Informer().HasSynced,
		pods.Informer().HasSynced, settings.HasSynced)
	poke := func() { c.EnqueueAfter(passKey, debounce) }
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() },
		UpdateFunc: func(old, obj any) {
			if a, ok := old.(*v1.VirtualMachineInstance); ok {
				if b, ok := obj.(*v1.VirtualMachineInstance); ok && relevant(a) == relevant(b) {
					return
				}
			}
			poke()
		},
		DeleteFunc: func(any) { poke() },
	}); err != nil {
		return nil, err
	}
	if _, err := migrations.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() }, UpdateFunc: func(_, _ any) { poke() }, DeleteFunc: func(any) { poke() },
	}); err != nil {
		return nil, err
	}
	if err := settings.OnChange(poke); err != nil {
		return nil, err
	}
	return c, nil
}

// vmiState is what of a VMI a pass decides from.
type vmiState struct {
	phase          v1.VirtualMachineInstancePhase
	launcher, node string
	labelled, gone bool
	migratable     bool
	migrating      bool
}

func relevant(vmi *v1.VirtualMachineInstance) vmiState {
	_, labelled := vmi.Labels[v1.OutdatedLauncherImageLabel]
	ms := vmi.Status.MigrationState
	return vmiState{phase: vmi.Status.Phase, launcher: vmi.Status.LauncherContainerImageVersion, node: vmi.Status.NodeName,
		labelled: labelled, gone: vmi.DeletionTimestamp != nil, migratable: migrationretry.LiveMigratable(vmi),
		migrating: ms != nil && !ms.Completed && !ms.Failed}
}

// sync is one pass over every VMI.
func (c *Controller) sync(ctx context.Context, _ string) error {
	settings := c.settings.Get()
	all, err := c.vmis.List(labels.Everything())
	if err != nil {
		return err
	}
	var outdated []*v1.VirtualMachineInstance
	var errs []error
	for _, vmi := range all {
		o := Outdated(vmi, c.opts.LauncherImage)
		if o {
			outdated = append(outdated, vmi)
		}
		errs = append(errs, c.syncLabel(ctx, vmi, o))
	}
	errs = append(errs, c.syncCount(ctx, settings.Object, len(outdated)))
	wu := settings.WorkloadUpdates
	if !wu.Enabled() || len(outdated) == 0 {
		return errors.Join(errs...)
	}
	if ready, why, err := c.nodeAgentsRolledOut(ctx); err != nil || !ready {
		klog.FromContext(ctx).V(2).Info("Workload updates wait for the node agents' rollout", "reason", why, "err", err)
		c.EnqueueAfter(passKey, rolloutPoll)
		return errors.Join(errs...)
	}
	byVMI, inFlight, err := c.migrationsByVMI()
	if err != nil {
		return err
	}
	now := c.now()
	c.mu.Lock()
	plan := Decide(Input{Settings: wu, ParallelMigrations: settings.Migrations.ParallelMigrationsPerCluster, Outdated: outdated,
		Migrations: byVMI, InFlight: inFlight, Skip: c.held(now, byVMI), LastEvictions: c.lastEvictions, Now: now})
	if len(plan.Evict) > 0 {
		c.lastEvictions = now
	}
	c.mu.Unlock()
	for _, vmi := range plan.Migrate {
		errs = append(errs, c.migrate(ctx, vmi))
	}
	for _, vmi := range plan.Evict {
		errs = append(errs, c.evict(ctx, vmi))
	}
	if plan.Again > 0 {
		c.EnqueueAfter(passKey, plan.Again)
	}
	if len(plan.Migrate)+len(plan.Evict) > 0 {
		klog.FromContext(ctx).Info("Workload updates", "outdated", len(outdated), "migrating", len(plan.Migrate),
			"evicting", len(plan.Evict), "waiting", plan.Waiting)
	}
	return errors.Join(errs...)
}

// migrationsByVMI indexes the cluster's migrations by "namespace/vmiName" and counts those not
// ended.
func (c *Controller) migrationsByVMI() (map[string][]*v1.VirtualMachineInstanceMigration, int, error) {
	ms, err := c.migrations.List(labels.Everything())
	if err != nil {
		return nil, 0, err
	}
	byVMI := map[string][]*v1.VirtualMachineInstanceMigration{}
	inFlight := 0
	for _, m := range ms {
		byVMI[m.Namespace+"/"+m.Spec.VMIName] = append(byVMI[m.Namespace+"/"+m.Spec.VMIName], m)
		if !migrationretry.Ended(m) {
			inFlight++
		}
	}
	return byVMI, inFlight, nil
}

// held returns the keys of VMIs acted on less than actedHold ago whose migrations the cache
// does not show a newer one of yet, and forgets the others. c.mu is held.
func (c *Controller) held(now time.Time, byVMI map[string][]*v1.VirtualMachineInstanceMigration) map[string]bool {
	out := map[string]bool{}
	for key, at := range c.acted {
		seen := false
		for _, m := range byVMI[key] {
			if IsWorkloadUpdate(m) && !m.CreationTimestamp.Time.Before(at.Add(-time.Second)) {
				seen = true
			}
		}
		if now.Sub(at) >= actedHold || seen {
			delete(c.acted, key)
			continue
		}
		out[key] = true
	}
	return out
}

// remember records that vmi was acted on now.
func (c *Controller) remember(vmi *v1.VirtualMachineInstance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acted[vmi.Namespace+"/"+vmi.Name] = c.now()
}

// failed wraps err saying what failed for which VMI, or returns nil.
func failed(err error, what string, vmi *v1.VirtualMachineInstance) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s of VMI %s/%s: %w", what, vmi.Namespace, vmi.Name, err)
}
