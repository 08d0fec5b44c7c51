package evacuation

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/migrationretry"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// fixture is a controller on fake clients whose informers run; its syncs are called directly,
// at the fixture's clock.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	vireo *vireofake.Clientset
	kube  *kubefake.Clientset
	ctrl  *Controller
	now   time.Time
}

func newFixture(t *testing.T, vireoObjs []runtime.Object, kubeObjs []runtime.Object) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vireo := vireofake.NewSimpleClientset(vireoObjs...)
	kube := kubefake.NewClientset(kubeObjs...)
	// The fakes fill in no names from generateName, UIDs or creation times: do as the API
	// server would.
	f := &fixture{t: t, ctx: ctx, vireo: vireo, kube: kube, now: t0.Add(time.Hour)}
	testsupport.StampObjects(func() time.Time { return f.now }, vireo, kube)
	vf := vireoinformers.NewSharedInformerFactory(vireo, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	ctrl, err := New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), vf.Kubevirt().V1().VirtualMachineInstanceMigrations(),
		kf.Core().V1().Nodes(), kf.Policy().V1().PodDisruptionBudgets())
	if err != nil {
		t.Fatal(err)
	}
	ctrl.now = func() time.Time { return f.now }
	f.ctrl = ctrl
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	vf.WaitForCacheSync(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	return f
}

// syncUntil syncs key until done holds (the informers deliver the controller's writes
// asynchronously).
func (f *fixture) syncUntil(key, what string, done func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := f.ctrl.sync(ctx, key); err != nil {
			return false, err
		}
		return done(), nil
	})
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// cachedMigrations waits until the controller's cache holds n migrations of VMI name.
func (f *fixture) cachedMigrations(name string, n int) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return len(f.ctrl.migrationsOf(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})) == n, nil
	})
	if err != nil {
		f.t.Fatalf("waiting for %d cached migrations of %s: %v", n, name, err)
	}
}

func (f *fixture) budget(vmi *v1.VirtualMachineInstance) (bool, error) {
	_, err := f.kube.PolicyV1().PodDisruptionBudgets("ns").Get(f.ctx, BudgetName(vmi), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// migrationsOf lists the migrations of VMI name from the API.
func (f *fixture) migrationsOf(name string) []v1.VirtualMachineInstanceMigration {
	f.t.Helper()
	list, err := f.vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var ms []v1.VirtualMachineInstanceMigration
	for _, m := range list.Items {
		if m.Spec.VMIName == name {
			ms = append(ms, m)
		}
	}
	return ms
}

func named(name string, vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
	vmi.Name, vmi.UID = name, types.UID("vmi-"+name)
	return vmi
}

func TestSyncCordonedNode(t *testing.T) {
	live := named("live", vmiWith(v1.EvictionStrategyLiveMigrate))
	none := named("none", vmiWith(v1.EvictionStrategyNone))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	f := newFixture(t, []runtime.Object{live, none}, []runtime.Object{node})

	f.syncUntil("ns/live", "the budget and evacuation migration of live", func() bool {
		ok, _ := f.budget(live)
		return ok && len(f.migrationsOf("live")) > 0
	})
	// Syncs before the informers deliver the migration create no second one.
	for range 3 {
		if err := f.ctrl.sync(f.ctx, "ns/live"); err != nil {
			t.Fatal(err)
		}
	}
	ms := f.migrationsOf("live")
	if len(ms) != 1 {
		t.Fatalf("%d migrations of live, want 1", len(ms))
	}
	m := ms[0]
	if m.GenerateName != MigrationGenerateName || m.Annotations[v1.EvacuationMigrationAnnotation] != "node1" ||
		m.Labels[v1.MigrationSelectorLabel] != "live" {
		t.Errorf("migration %s: generateName %q, annotations %v, labels %v", m.Name, m.GenerateName, m.Annotations, m.Labels)
	}
	pdb, err := f.kube.PolicyV1().PodDisruptionBudgets("ns").Get(f.ctx, "kubevirt-disruption-budget-vmi-live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(pdb, live) || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.Selector.MatchLabels[v1.CreatedByLabel] != "vmi-live" {
		t.Errorf("budget = %+v", pdb)
	}

	if err := f.ctrl.sync(f.ctx, "ns/none"); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.budget(none); ok || err != nil {
		t.Errorf("VMI with strategy None: budget %v, %v", ok, err)
	}
	if ms := f.migrationsOf("none"); len(ms) != 0 {
		t.Errorf("VMI with strategy None: %d migrations", len(ms))
	}
}

func TestSyncRetriesFailedEvacuationAfterBackoff(t *testing.T) {
	live := named("live", vmiWith(v1.EvictionStrategyLiveMigrate))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	f := newFixture(t, []runtime.Object{live}, []runtime.Object{node})
	f.syncUntil("ns/live", "the first evacuation migration", func() bool { return len(f.migrationsOf("live")) == 1 })
	f.cachedMigrations("live", 1)

	// The migration fails.
	m := f.migrationsOf("live")[0]
	m.Status.Phase = v1.MigrationFailed
	m.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{
		{Phase: v1.MigrationFailed, PhaseTransitionTimestamp: metav1.NewTime(f.now)},
	}
	if _, err := f.vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").UpdateStatus(f.ctx, &m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		ms := f.ctrl.migrationsOf(live)
		return len(ms) == 1 && ms[0].Status.Phase == v1.MigrationFailed, nil
	})
	if err != nil {
		t.Fatal("the failure did not reach the cache")
	}

	// Within the back-off, no new migration.
	f.now = f.now.Add(migrationretry.BaseBackoff - time.Second)
	if err := f.ctrl.sync(f.ctx, "ns/live"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.migrationsOf("live")); n != 1 {
		t.Fatalf("%d migrations within the back-off, want 1", n)
	}
	// After it, another one.
	f.now = f.now.Add(time.Second)
	f.syncUntil("ns/live", "the retry", func() bool { return len(f.migrationsOf("live")) == 2 })

	// Uncordoned: no more evacuations, the budget stays.
	node.Spec.Unschedulable = false
	if _, err := f.kube.CoreV1().Nodes().Update(f.ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		n, err := f.ctrl.nodes.Get("node1")
		return err == nil && !n.Spec.Unschedulable, nil
	})
	if err != nil {
		t.Fatal("the uncordon did not reach the cache")
	}
	for _, m := range f.migrationsOf("live") {
		m.Status.Phase = v1.MigrationFailed
		if _, err := f.vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").UpdateStatus(f.ctx, &m, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.now = f.now.Add(time.Hour)
	err = wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		ms := f.ctrl.migrationsOf(live)
		return len(ms) == 2 && migrationretry.Ended(ms[0]) && migrationretry.Ended(ms[1]), nil
	})
	if err != nil {
		t.Fatal("the failures did not reach the cache")
	}
	if err := f.ctrl.sync(f.ctx, "ns/live"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.migrationsOf("live")); n != 2 {
		t.Errorf("%d migrations after the uncordon, want 2", n)
	}
	if ok, err := f.budget(live); !ok || err != nil {
		t.Errorf("budget after the uncordon: %v, %v", ok, err)
	}
}

func TestSyncDeletesBudgetNoLongerNeeded(t *testing.T) {
	vmi := named("live", vmiWith(v1.EvictionStrategyLiveMigrate))
	f := newFixture(t, []runtime.Object{vmi}, nil)
	f.syncUntil("ns/live", "the budget in the cache", func() bool {
		_, err := f.ctrl.budgets.PodDisruptionBudgets("ns").Get(BudgetName(vmi))
		return err == nil
	})
	// The guest shuts down: the VMI ends and needs no budget.
	vmi.Status.Phase = v1.Succeeded
	if _, err := f.vireo.KubevirtV1().VirtualMachineInstances("ns").UpdateStatus(f.ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.syncUntil("ns/live", "the budget's deletion", func() bool {
		ok, err := f.budget(vmi)
		return !ok && err == nil
	})
}
