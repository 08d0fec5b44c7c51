package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestLauncherPodThroughMigrations: the agent follows the Pod the guest runs in, also while a
// migration to another node completes and the VMI has not moved yet: then it is the source Pod,
// even when that Pod was itself an earlier migration's target (labelled as such).
func TestLauncherPodThroughMigrations(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-uid"}}
	pod := func(name string, target bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			Labels: map[string]string{v1.CreatedByLabel: "vmi-uid"}}}
		if target {
			p.Labels[v1.MigrationJobLabel] = "earlier"
		}
		return p
	}
	cases := []struct {
		name  string
		pods  []*corev1.Pod
		state *v1.VirtualMachineInstanceMigrationState
		want  string
	}{
		{"never migrated", []*corev1.Pod{pod("first", false)}, nil, "first"},
		{"in flight: the source", []*corev1.Pod{pod("first", false), pod("second", true)},
			&v1.VirtualMachineInstanceMigrationState{SourcePod: "first", TargetPod: "second"}, "first"},
		{"completed in place: the target", []*corev1.Pod{pod("first", false), pod("second", true)},
			&v1.VirtualMachineInstanceMigrationState{SourcePod: "first", TargetPod: "second", Completed: true}, "second"},
		{"completed to another node, from an earlier target: the source", []*corev1.Pod{pod("second", true)},
			&v1.VirtualMachineInstanceMigrationState{SourcePod: "second", TargetPod: "third", Completed: true}, "second"},
		{"nothing on this node", []*corev1.Pod{pod("other", true)},
			&v1.VirtualMachineInstanceMigrationState{SourcePod: "second", TargetPod: "third", Completed: true}, ""},
	}
	for _, c := range cases {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, p := range c.pods {
			_ = idx.Add(p)
		}
		a := assemble(&Options{}, nil, nil, listers{pods: corelisters.NewPodLister(idx)}, nil)
		v := vmi.DeepCopy()
		v.Status.MigrationState = c.state
		got, err := a.launcherPod(v)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%s: launcher Pod %q, want %q", c.name, name, c.want)
		}
	}
}

// TestMigratedAway: a VMI leaves this node by migration only from here, to another node, once
// started and not failed, and not while it is deleted.
func TestMigratedAway(t *testing.T) {
	started := &metav1.Time{Time: time.Now()}
	state := func(mutate func(*v1.VirtualMachineInstanceMigrationState)) *v1.VirtualMachineInstance {
		ms := &v1.VirtualMachineInstanceMigrationState{StartTimestamp: started, SourceNode: "node1", TargetNode: "node2"}
		mutate(ms)
		return &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{NodeName: "node1", MigrationState: ms}}
	}
	deleted := state(func(*v1.VirtualMachineInstanceMigrationState) {})
	deleted.DeletionTimestamp = started
	for _, c := range []struct {
		name string
		vmi  *v1.VirtualMachineInstance
		want bool
	}{
		{"running migration to node2", state(func(*v1.VirtualMachineInstanceMigrationState) {}), true},
		{"completed migration to node2", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.Completed = true }), true},
		{"failed migration", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.Failed = true }), false},
		{"not started", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.StartTimestamp = nil }), false},
		{"in place", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.TargetNode = "node1" }), false},
		{"from another node", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.SourceNode = "node3" }), false},
		{"VMI deleted", deleted, false},
		{"no migration", &v1.VirtualMachineInstance{}, false},
	} {
		if got := migratedAway(c.vmi, "node1"); got != c.want {
			t.Errorf("%s: migratedAway = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLauncherPodWhileTheCacheLags: a launcher Pod missing from the agent's cache (its watch
// behind, after kube-apiserver restarted) is found in the API, so a Scheduled VMI is not failed
// as if its launcher were gone; one the API lacks too is gone.
func TestLauncherPodWhileTheCacheLags(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-uid"},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Scheduled, NodeName: "node1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm-abcde", UID: "pod-uid",
		Labels: map[string]string{v1.CreatedByLabel: "vmi-uid"}}, Spec: corev1.PodSpec{NodeName: "node1"}}
	empty := corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
	for _, c := range []struct {
		name string
		api  []runtime.Object
		want string
	}{
		{"in the API, not yet in the cache", []runtime.Object{pod}, "virt-launcher-vm-abcde"},
		{"gone from both", nil, ""},
	} {
		a := assemble(&Options{NodeName: "node1"}, nil, kubefake.NewClientset(c.api...), listers{pods: empty}, nil)
		got, err := a.confirmedLauncherPod(t.Context(), vmi)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%s: launcher Pod %q, want %q", c.name, name, c.want)
		}
		if st := nextStatus(vmi, observation{pod: got}, metav1.Now()); c.want != "" && st.Phase != v1.Scheduled {
			t.Errorf("%s: the VMI went %s (%s), want it left Scheduled", c.name, st.Phase, st.Reason)
		}
	}
}
