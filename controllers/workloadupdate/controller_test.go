package workloadupdate

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// updater runs the controller on fake clients holding objs (Vireo's) and kubeObjs; its passes
// are called directly.
func updater(t *testing.T, objs, kubeObjs []runtime.Object) (*Controller, *vireofake.Clientset, *kubefake.Clientset) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vireo := vireofake.NewSimpleClientset(objs...)
	kube := kubefake.NewClientset(kubeObjs...)
	testsupport.StampObjects(func() time.Time { return t0.Add(time.Hour) }, vireo, kube)
	vf := vireoinformers.NewSharedInformerFactory(vireo, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	settings, err := clusterconfig.New(vf.Kubevirt().V1().KubeVirts())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), vf.Kubevirt().V1().VirtualMachineInstanceMigrations(),
		kf.Core().V1().Pods(), settings, Options{LauncherImage: "new", NodeAgentDaemonSet: "vireo-nodeagent"})
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return t0.Add(time.Hour) }
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	vf.WaitForCacheSync(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	return c, vireo, kube
}

func kubeVirt(methods ...v1.WorkloadUpdateMethod) *v1.KubeVirt {
	return &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Namespace: v1.InstallNamespace, Name: "kubevirt"},
		Spec: v1.KubeVirtSpec{WorkloadUpdateStrategy: &v1.KubeVirtWorkloadUpdateStrategy{WorkloadUpdateMethods: methods}}}
}

func nodeAgents(updated int32) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: v1.InstallNamespace, Name: "vireo-nodeagent"},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, UpdatedNumberScheduled: updated, NumberAvailable: 2}}
}

func launcherPod(vmi *v1.VirtualMachineInstance) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: vmi.Namespace, Name: "virt-launcher-" + vmi.Name, UID: types.UID("pod-" + vmi.Name),
		Labels: map[string]string{v1.AppLabel: v1.LauncherApp, v1.CreatedByLabel: string(vmi.UID)}},
		Spec: corev1.PodSpec{NodeName: vmi.Status.NodeName}}
}

// actions returns the fake's actions of verb on resource (and subresource).
func actions(f *k8stesting.Fake, verb, resource, subresource string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == subresource {
			out = append(out, a)
		}
	}
	return out
}

// pass runs passes until done holds (the informers deliver writes asynchronously).
func pass(t *testing.T, c *Controller, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.sync(ctx, passKey); err != nil {
			return false, err
		}
		return done(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestOutdatedGuestsAreLabelledCountedAndMovedOnceTheAgentsRolledOut(t *testing.T) {
	mover, stuck, current := running(0, true), running(1, false), running(2, true)
	mover.UID, stuck.UID = "uid-mover", "uid-stuck"
	current.Status.LauncherContainerImageVersion = "new"
	current.Labels = map[string]string{v1.OutdatedLauncherImageLabel: ""} // stale: removed
	c, vireo, kube := updater(t, []runtime.Object{kubeVirt(v1.WorkloadUpdateMethodLiveMigrate, v1.WorkloadUpdateMethodEvict), mover, stuck, current},
		[]runtime.Object{nodeAgents(1), launcherPod(stuck)})
	ctx := context.Background()

	labelled := func(name string) bool {
		vmi, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, name, metav1.GetOptions{})
		_, ok := vmi.Labels[v1.OutdatedLauncherImageLabel]
		return err == nil && ok
	}
	pass(t, c, "the labels and the count", func() bool {
		kv, err := vireo.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(ctx, "kubevirt", metav1.GetOptions{})
		n := kv.Status.OutdatedVirtualMachineInstanceWorkloads
		return err == nil && n != nil && *n == 2 && labelled(mover.Name) && labelled(stuck.Name) && !labelled(current.Name)
	})
	if n := len(actions(&vireo.Fake, "create", "virtualmachineinstancemigrations", "")) + len(actions(&kube.Fake, "create", "pods", "eviction")); n != 0 {
		t.Fatalf("%d moves while 1 of 2 node agents is updated, want none", n)
	}

	if _, err := kube.AppsV1().DaemonSets(v1.InstallNamespace).UpdateStatus(ctx, nodeAgents(2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pass(t, c, "a migration and an eviction", func() bool {
		return len(actions(&vireo.Fake, "create", "virtualmachineinstancemigrations", "")) == 1 && len(actions(&kube.Fake, "create", "pods", "eviction")) == 1
	})
	ms, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").List(ctx, metav1.ListOptions{})
	if err != nil || len(ms.Items) != 1 {
		t.Fatalf("migrations: %v, %v", ms, err)
	}
	if m := ms.Items[0]; m.Spec.VMIName != mover.Name || !IsWorkloadUpdate(&m) || m.GenerateName != MigrationGenerateName {
		t.Errorf("migration %+v, want a workload update migration of %s", m.ObjectMeta, mover.Name)
	}
	ev := actions(&kube.Fake, "create", "pods", "eviction")[0].(k8stesting.CreateAction).GetObject()
	if e, ok := ev.(interface{ GetName() string }); !ok || e.GetName() != "virt-launcher-"+stuck.Name {
		t.Errorf("evicted %v, want the launcher Pod of %s", ev, stuck.Name)
	}
	// The next passes hold both: the migration is in flight, the eviction in its batch interval.
	for range 3 {
		if err := c.sync(ctx, passKey); err != nil {
			t.Fatal(err)
		}
	}
	if n, e := len(actions(&vireo.Fake, "create", "virtualmachineinstancemigrations", "")), len(actions(&kube.Fake, "create", "pods", "eviction")); n != 1 || e != 1 {
		t.Errorf("after more passes: %d migrations, %d evictions; want 1 and 1", n, e)
	}
}

func TestWithoutAStrategyNothingMoves(t *testing.T) {
	vmi := running(0, true)
	c, vireo, kube := updater(t, []runtime.Object{kubeVirt(), vmi}, []runtime.Object{nodeAgents(2), launcherPod(vmi)})
	pass(t, c, "the label", func() bool {
		got, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(context.Background(), vmi.Name, metav1.GetOptions{})
		_, ok := got.Labels[v1.OutdatedLauncherImageLabel]
		return err == nil && ok
	})
	if n := len(actions(&vireo.Fake, "create", "virtualmachineinstancemigrations", "")) + len(actions(&kube.Fake, "create", "pods", "eviction")); n != 0 {
		t.Errorf("%d moves without workloadUpdateMethods, want none", n)
	}
}
