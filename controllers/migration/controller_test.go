package migration

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// fixture is a controller on fake clients whose informers run; its syncs are called directly.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	vireo *vireofake.Clientset
	kube  *kubefake.Clientset
	ctrl  *Controller
}

func newFixture(ctx context.Context, t *testing.T, vireo *vireofake.Clientset, kube *kubefake.Clientset) *fixture {
	t.Helper()
	// The fakes keep no resourceVersions (the controller's stale-cache check relies on them),
	// UIDs or creation times: set them as the API server would.
	testsupport.StampObjects(time.Now, vireo, kube)
	vf := vireoinformers.NewSharedInformerFactory(vireo, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	settings, err := clusterconfig.New(vf.Kubevirt().V1().KubeVirts())
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstanceMigrations(), vf.Kubevirt().V1().VirtualMachineInstances(),
		kf.Core().V1().Pods(), settings, NewPolicies(vf.Migrations().V1alpha1().MigrationPolicies(), kf.Core().V1().Namespaces()), opts)
	if err != nil {
		t.Fatal(err)
	}
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	vf.WaitForCacheSync(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	return &fixture{t: t, ctx: ctx, vireo: vireo, kube: kube, ctrl: ctrl}
}

// syncUntil syncs key until done holds (the informers deliver the controller's writes
// asynchronously, and a sync on a stale cache does nothing).
func (f *fixture) syncUntil(key, what string, done func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := f.ctrl.sync(ctx, key); err != nil && !apierrors.IsConflict(err) {
			return false, err
		}
		return done(), nil
	})
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", what, err)
	}
}

func (f *fixture) migration(name string) *v1.VirtualMachineInstanceMigration {
	f.t.Helper()
	m, err := f.vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) vmi() *v1.VirtualMachineInstance {
	f.t.Helper()
	vmi, err := f.vireo.KubevirtV1().VirtualMachineInstances("ns").Get(f.ctx, "vm1", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return vmi
}

// nodeAgent changes the VMI's migration state as a node agent would.
func (f *fixture) nodeAgent(change func(*v1.VirtualMachineInstanceStatus)) {
	f.t.Helper()
	vmi := f.vmi()
	change(&vmi.Status)
	if _, err := f.vireo.KubevirtV1().VirtualMachineInstances("ns").UpdateStatus(f.ctx, vmi, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func TestDeletedMigrationReleasesOnlyItsFinalizer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gone := deleted(migrationIn(v1.MigrationRunning))
	gone.Name = "deleted"
	gone.Finalizers = append(gone.Finalizers, "other.example/keep")
	live := migrationIn(v1.MigrationSucceeded)
	live.Name, live.UID = "live", "live-uid"
	f := newFixture(ctx, t, vireofake.NewClientset(gone, live), kubefake.NewClientset())

	f.syncUntil("ns/deleted", "the finalizer's release", func() bool {
		return !slices.Contains(f.migration("deleted").Finalizers, v1.VirtualMachineInstanceMigrationFinalizer)
	})
	got := f.migration("deleted")
	if !slices.Equal(got.Finalizers, []string{"other.example/keep"}) {
		t.Errorf("deleted migration's finalizers = %v, want only the foreign one kept", got.Finalizers)
	}
	if got.Status.Phase != v1.MigrationFailed {
		t.Errorf("a migration deleted with its VMI gone ended %s, want Failed", got.Status.Phase)
	}
	if err := f.ctrl.sync(ctx, "ns/live"); err != nil {
		t.Fatal(err)
	}
	if got := f.migration("live").Finalizers; !slices.Contains(got, v1.VirtualMachineInstanceMigrationFinalizer) {
		t.Errorf("a migration that is not deleted lost its finalizer: %v", got)
	}
}

// TestMigrationThroughItsPhases drives a migration from Pending to Succeeded, playing the
// scheduler, the kubelet and the node agents.
func TestMigrationThroughItsPhases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	vmi := runningVMI()
	vmi.Status.ActivePods = map[types.UID]string{"source-uid": "node-a"}
	src := source()
	src.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}
	src.Labels = map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: string(vmi.UID)}
	vmi.Labels = map[string]string{"tier": "db"}
	policy := &v1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "slow-db"}, Spec: v1alpha1.MigrationPolicySpec{
		Selectors:             &v1alpha1.Selectors{VirtualMachineInstanceSelector: v1alpha1.LabelSelector{"tier": "db"}},
		BandwidthPerMigration: new(resource.MustParse("32Mi")), AllowPostCopy: new(true),
	}}
	f := newFixture(ctx, t, vireofake.NewClientset(vmi, migrationIn(v1.MigrationPending), policy), kubefake.NewClientset(src))

	f.syncUntil("ns/m", "Scheduling", func() bool { return f.migration("m").Status.Phase == v1.MigrationScheduling })
	// The policy that selects the VMI overrides the cluster's settings for this migration.
	if s := f.vmi().Status.MigrationState; s.MigrationPolicyName == nil || *s.MigrationPolicyName != "slow-db" ||
		s.MigrationConfiguration.BandwidthPerMigration.String() != "32Mi" || !*s.MigrationConfiguration.AllowPostCopy ||
		!*s.MigrationConfiguration.AllowWorkloadDisruption || *s.MigrationConfiguration.CompletionTimeoutPerGiB != 150 {
		t.Errorf("migration policy %v, configuration %+v; want slow-db's 32Mi with post-copy over the cluster's 150 s/GiB", s.MigrationPolicyName, s.MigrationConfiguration)
	}
	pod, err := f.kube.CoreV1().Pods("ns").Get(ctx, targetPod, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("target Pod: %v", err)
	}
	if s := f.vmi().Status.MigrationState; s == nil || s.SourcePod != sourcePod || s.TargetPod != targetPod || s.SourceNode != "node-a" || s.MigrationUID != "mig-uid" {
		t.Fatalf("VMI migrationState %+v", s)
	}

	// The scheduler binds the target Pod to node-b, and it becomes ready.
	ready := target(nil)
	pod.Spec.NodeName, pod.Status = ready.Spec.NodeName, ready.Status
	if _, err := f.kube.CoreV1().Pods("ns").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.syncUntil("ns/m", "PreparingTarget", func() bool { return f.migration("m").Status.Phase == v1.MigrationPreparingTarget })
	if got := f.vmi().Status; got.MigrationState.TargetNode != "node-b" || got.ActivePods[pod.UID] != "node-b" {
		t.Fatalf("VMI after Scheduled: targetNode %q activePods %v", got.MigrationState.TargetNode, got.ActivePods)
	}

	// The node agents prepare the target, run the transfer and complete it.
	f.nodeAgent(func(st *v1.VirtualMachineInstanceStatus) { st.MigrationState.TargetNodeAddress = "node-b" })
	f.syncUntil("ns/m", "TargetReady", func() bool { return f.migration("m").Status.Phase == v1.MigrationTargetReady })
	f.nodeAgent(func(st *v1.VirtualMachineInstanceStatus) {
		start := metav1.Now()
		st.MigrationState.StartTimestamp = &start
		st.MigrationState.Completed = true
	})
	f.syncUntil("ns/m", "the VMI on the target node", func() bool { return f.vmi().Status.NodeName == "node-b" })
	if got := f.vmi().Status.ActivePods; len(got) != 1 || got[pod.UID] != "node-b" {
		t.Errorf("activePods after completion = %v", got)
	}
	if _, err := f.kube.CoreV1().Pods("ns").Get(ctx, sourcePod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("source Pod after completion: %v, want it deleted", err)
	}
	f.nodeAgent(func(st *v1.VirtualMachineInstanceStatus) { st.MigrationState.TargetNodeDomainDetected = true })
	f.syncUntil("ns/m", "Succeeded", func() bool { return f.migration("m").Status.Phase == v1.MigrationSucceeded })

	m := f.migration("m")
	var got []v1.VirtualMachineInstanceMigrationPhase
	for _, ts := range m.Status.PhaseTransitionTimestamps {
		got = append(got, ts.Phase)
	}
	want := []v1.VirtualMachineInstanceMigrationPhase{v1.MigrationScheduling, v1.MigrationScheduled, v1.MigrationPreparingTarget,
		v1.MigrationTargetReady, v1.MigrationRunning, v1.MigrationSucceeded}
	if !slices.Equal(got, want) {
		t.Errorf("phase transitions %v, want %v", got, want)
	}
	if s := m.Status.MigrationState; s == nil || !s.Completed || !s.TargetNodeDomainDetected || s.TargetNode != "node-b" {
		t.Errorf("the migration's migrationState %+v is not the VMI's", s)
	}
}

// TestStartsRespectTheClusterLimit starts more migrations than the cluster allows at once.
func TestStartsRespectTheClusterLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var objs []runtime.Object
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		vmi := runningVMI()
		vmi.Name, vmi.UID = name, types.UID("vmi-"+name)
		vmi.Status.NodeName = "node-" + name // no node limit in the way
		m := migrationIn(v1.MigrationPending)
		m.Name, m.UID, m.Spec.VMIName = name, types.UID("mig-"+name), name
		objs = append(objs, vmi, m)
	}
	f := newFixture(ctx, t, vireofake.NewClientset(objs...), kubefake.NewClientset())
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		// Back to back: the cache does not show the earlier starts yet.
		if err := f.ctrl.sync(ctx, "ns/"+name); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := f.kube.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 5 {
		t.Errorf("%d target Pods, want 5 (parallelMigrationsPerCluster)", len(pods.Items))
	}
}
