package replicaset

import (
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

var (
	set = &v1.VirtualMachineInstanceReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs-uid"}}
	sel = labels.SelectorFromSet(labels.Set{"app": "web"})
)

// vmi is a VMI of the test; owner "" is an orphan, "web" is owned by set, anything else by another controller.
func vmi(name, owner string, app string, phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
	o := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": app}}}
	o.Status.Phase = phase
	if owner != "" {
		uid := types.UID("other-uid")
		if owner == "web" {
			uid = set.UID
		}
		o.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(&metav1.ObjectMeta{Name: owner, UID: uid}, v1.SchemeGroupVersion.WithKind(Kind))}
	}
	return o
}

func names(vmis []*v1.VirtualMachineInstance) []string {
	var out []string
	for _, v := range vmis {
		out = append(out, v.Name)
	}
	return out
}

func TestSortMembers(t *testing.T) {
	deleting := vmi("deleting", "web", "web", v1.Running)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	m := sortMembers(set, sel, []*v1.VirtualMachineInstance{
		vmi("mine", "web", "web", v1.Running),
		vmi("done", "web", "web", v1.Succeeded),
		vmi("orphan", "", "web", v1.Pending),
		vmi("orphan-done", "", "web", v1.Failed),
		vmi("strayed", "web", "db", v1.Running),
		vmi("theirs", "other", "web", v1.Running),
		vmi("unrelated", "", "db", v1.Running),
		deleting,
	})
	for what, c := range map[string]struct{ got, want []string }{
		"active":   {names(m.active), []string{"mine", "orphan"}},
		"finished": {names(m.finished), []string{"done"}},
		"adopt":    {names(m.adopt), []string{"orphan"}},
		"release":  {names(m.release), []string{"strayed"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", what, c.got, c.want)
		}
	}
}

// TestDeletionOrder: scaling down removes VMIs not yet on a node first, then those not ready,
// then the youngest; a guest that has been ready longest goes last.
func TestDeletionOrder(t *testing.T) {
	at := func(v *v1.VirtualMachineInstance, node string, isReady bool, age time.Duration) *v1.VirtualMachineInstance {
		v.Status.NodeName = node
		v.CreationTimestamp = metav1.NewTime(time.Now().Add(-age))
		if isReady {
			v.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}}
		}
		return v
	}
	active := []*v1.VirtualMachineInstance{
		at(vmi("old-ready", "web", "web", v1.Running), "n1", true, time.Hour),
		at(vmi("young-ready", "web", "web", v1.Running), "n1", true, time.Minute),
		at(vmi("booting", "web", "web", v1.Scheduled), "n1", false, time.Hour),
		at(vmi("unscheduled", "web", "web", v1.Pending), "", false, 2*time.Hour),
	}
	got := names(deletionOrder(active, 4))
	want := []string{"unscheduled", "booting", "young-ready", "old-ready"}
	if !slices.Equal(got, want) {
		t.Errorf("deletion order %v, want %v", got, want)
	}
	if got := deletionOrder(active, 1); len(got) != 1 || got[0].Name != "unscheduled" {
		t.Errorf("deleting one: %v", names(got))
	}
	if names(active)[0] != "old-ready" {
		t.Error("deletionOrder reordered its input")
	}
}

// TestNextStatus: replicas and readyReplicas count the active VMIs; the selector is published in
// string form for /scale; ReplicaPaused follows spec.paused and ReplicaFailure the last scaling,
// their transition times kept while they hold.
func TestNextStatus(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	ready := vmi("a", "web", "web", v1.Running)
	ready.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}}
	active := []*v1.VirtualMachineInstance{ready, vmi("b", "web", "web", v1.Scheduling)}

	rs := set.DeepCopy()
	rs.Spec.Paused = true
	st := nextStatus(rs, active, sel, errors.New("quota exceeded"), true, t0)
	if st.Replicas != 2 || st.ReadyReplicas != 1 || st.LabelSelector != "app=web" {
		t.Errorf("counts %+v", st)
	}
	if len(st.Conditions) != 2 || st.Conditions[0].Type != v1.ReplicaSetReplicaPaused || st.Conditions[1].Reason != "FailedCreate" ||
		st.Conditions[1].Message != "quota exceeded" {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	rs.Status = st
	again := nextStatus(rs, active, sel, errors.New("quota exceeded"), true, t1)
	if again.Conditions[0].LastTransitionTime != t0 {
		t.Errorf("a condition that holds changed its transition time to %v", again.Conditions[0].LastTransitionTime)
	}
	rs.Spec.Paused = false
	cleared := nextStatus(rs, active, sel, nil, false, t1)
	if cleared.Conditions != nil {
		t.Errorf("conditions after resuming without errors: %+v", cleared.Conditions)
	}
	if failed := nextStatus(rs, active, sel, errors.New("x"), false, t1); failed.Conditions[0].Reason != "FailedDelete" {
		t.Errorf("a failed scale-down: %+v", failed.Conditions)
	}
}

// TestPendingWrites: a set with created VMIs the cache does not show yet, or deleted ones it
// still shows, is not scaled again until the cache catches up or the writes are too old.
func TestPendingWrites(t *testing.T) {
	var p pending
	now := time.Now()
	if !p.settled("ns/web", nil, now) {
		t.Fatal("a set without writes is not settled")
	}
	p.expect("ns/web", []string{"web-a"}, []string{"web-old"}, now)
	old := vmi("web-old", "web", "web", v1.Running)
	cache := map[string]*v1.VirtualMachineInstance{"web-old": old}
	if p.settled("ns/web", cache, now) {
		t.Error("settled before the created VMI is in the cache")
	}
	cache["web-a"] = vmi("web-a", "web", "web", v1.Pending)
	if p.settled("ns/web", cache, now) {
		t.Error("settled while the deleted VMI is in the cache without a deletion timestamp")
	}
	old.DeletionTimestamp = &metav1.Time{Time: now}
	if !p.settled("ns/web", cache, now) {
		t.Error("not settled once the cache shows both writes")
	}
	p.expect("ns/web", []string{"lost"}, nil, now)
	if !p.settled("ns/web", cache, now.Add(pendingTTL+time.Second)) {
		t.Error("a write never seen holds the set past pendingTTL")
	}
}
