package vmi

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

var testLauncher = launcherpod.Options{Image: "ghcr.io/vireo-dev/vireo-launcher:test"}

func deletedVMI(name string) *v1.VirtualMachineInstance {
	now := metav1.Now()
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", UID: types.UID("uid-" + name), DeletionTimestamp: &now,
		Finalizers: []string{v1.VirtualMachineInstanceFinalizer, "other.example/keep"},
	}}
}

func launcher(vmiName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "virt-launcher-" + vmiName, Namespace: "ns",
		Labels: map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: "uid-" + vmiName},
	}}
}

func TestDeletedVMIReleasesFinalizerOnlyWithoutLauncher(t *testing.T) {
	cases := []struct {
		name        string
		pods        []*corev1.Pod
		wantRelease bool
	}{
		{"no launcher left", nil, true},
		{"launcher still running", []*corev1.Pod{launcher("vm")}, false},
		{"another VMI's launcher", []*corev1.Pod{launcher("other")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			vireo := vireofake.NewClientset(deletedVMI("vm"))
			ctrl := startController(ctx, t, vireo, c.pods...)

			if err := ctrl.sync(ctx, "ns/vm"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "vm", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			released := !slices.Contains(got.Finalizers, v1.VirtualMachineInstanceFinalizer)
			if released != c.wantRelease {
				t.Errorf("finalizers %v: released=%v, want %v", got.Finalizers, released, c.wantRelease)
			}
			if !slices.Contains(got.Finalizers, "other.example/keep") {
				t.Errorf("another owner's finalizer was removed: %v", got.Finalizers)
			}
		})
	}
}

// startController runs the controller's informers on fake clients holding vireo's objects and
// pods, and returns it once their caches are in sync (sync is then called directly).
func startController(ctx context.Context, t *testing.T, vireo *vireofake.Clientset, pods ...*corev1.Pod) *Controller {
	t.Helper()
	return startControllerWithEvents(ctx, t, vireo, nil, pods...)
}

// startControllerWithEvents is startController with events in the kube client too.
func startControllerWithEvents(ctx context.Context, t *testing.T, vireo *vireofake.Clientset, events []*corev1.Event, pods ...*corev1.Pod) *Controller {
	t.Helper()
	kube := kubefake.NewClientset()
	for _, p := range pods {
		if _, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range events {
		if _, err := kube.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	vf := vireoinformers.NewSharedInformerFactory(vireo, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	ctrl, err := New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods(), vf.Cdi().V1beta1().DataVolumes(),
		kf.Core().V1().Events(), testLauncher, nil)
	if err != nil {
		t.Fatal(err)
	}
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	vf.WaitForCacheSync(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	return ctrl
}

// TestRunningVMIFollowsItsCurrentPod: during and after a live migration the VMI controller
// watches the Pod the guest runs in, and a migration's other Pod ending does not fail the VMI.
func TestRunningVMIFollowsItsCurrentPod(t *testing.T) {
	first := launcherpodapi.PodName("vm", "uid-vm")
	target := launcherpodapi.PodName("vm", "mig-uid")
	owned := func(name string, mutate func(*corev1.Pod)) *corev1.Pod {
		vmi := libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running))
		p := launcherPod(mutate)
		p.Name, p.UID = name, types.UID("uid-"+name)
		p.Labels = map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: "uid-vm"}
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(vmi, v1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}
		return p
	}
	endedLongAgo := failedAt(time.Now().Add(-time.Hour))
	cases := []struct {
		name  string
		state *v1.VirtualMachineInstanceMigrationState
		pods  []*corev1.Pod
	}{
		{"migrated: the first Pod ended, the target runs",
			&v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: target, Completed: true},
			[]*corev1.Pod{owned(first, endedLongAgo), owned(target, running)}},
		{"migrating: the target is not running yet",
			&v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: target},
			[]*corev1.Pod{owned(first, running), owned(target, endedLongAgo)}},
		{"migration failed: the target ended, the source runs",
			&v1.VirtualMachineInstanceMigrationState{SourcePod: first, TargetPod: target, Failed: true},
			[]*corev1.Pod{owned(first, running), owned(target, endedLongAgo)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			vmi := libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running))
			vmi.Status.NodeName = "node-a"
			vmi.Status.MigrationState = c.state
			vireo := vireofake.NewClientset(vmi)
			ctrl := startController(ctx, t, vireo, c.pods...)
			if err := ctrl.sync(ctx, "ns/vm"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "vm", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != v1.Running {
				t.Errorf("phase %s (%s), want Running", got.Status.Phase, got.Status.Reason)
			}
		})
	}
}

// TestInProgressSortsTheQueue: a VMI the controller has not acted on is new work, also when
// vireo-apiserver created it Pending (as it creates every VMI); one past Pending, one being
// deleted and one gone (its cleanup) are work in progress, queued first.
func TestInProgressSortsTheQueue(t *testing.T) {
	vireo := vireofake.NewClientset(libvmi.New(libvmi.WithName("new")), libvmi.New(libvmi.WithName("created"), libvmi.WithUID("u1"),
		libvmi.InPhase(v1.Pending)), libvmi.New(libvmi.WithName("scheduling"), libvmi.WithUID("u2"),
		libvmi.InPhase(v1.Scheduling)), deletedVMI("deleting"))
	c := startController(t.Context(), t, vireo)
	for key, want := range map[string]bool{"ns/new": false, "ns/created": false, "ns/scheduling": true, "ns/deleting": true, "ns/gone": true} {
		if got := c.inProgress(key); got != want {
			t.Errorf("inProgress(%s) = %v, want %v", key, got, want)
		}
	}
}
