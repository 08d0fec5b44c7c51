package migration

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

var (
	now       = metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	limits    = defaults.MigrationSettings{ParallelMigrationsPerCluster: 5, ParallelOutboundMigrationsPerNode: 2}
	sourcePod = launcherpodapi.PodName("vm1", "vmi-uid")
	targetPod = launcherpodapi.PodName("vm1", "mig-uid")
)

// migrationIn is migration "m" of vm1 in phase.
func migrationIn(phase v1.VirtualMachineInstanceMigrationPhase) *v1.VirtualMachineInstanceMigration {
	m := migrationOf(nil)
	m.Status.Phase = phase
	m.Finalizers = []string{v1.VirtualMachineInstanceMigrationFinalizer}
	return m
}

func deleted(m *v1.VirtualMachineInstanceMigration) *v1.VirtualMachineInstanceMigration {
	m.DeletionTimestamp = &now
	return m
}

// vmiWith is vm1 running on node-a in its first launcher Pod, with migration state s.
func vmiWith(s *v1.VirtualMachineInstanceMigrationState) *v1.VirtualMachineInstance {
	vmi := runningVMI()
	vmi.Status.ActivePods = map[types.UID]string{"source-uid": "node-a"}
	vmi.Status.MigrationState = s
	return vmi
}

// stateOfM is the state the controller records when migration m starts, changed by mutate.
func stateOfM(mutate func(*v1.VirtualMachineInstanceMigrationState)) *v1.VirtualMachineInstanceMigrationState {
	s := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "mig-uid", SourceNode: "node-a", SourcePod: sourcePod,
		TargetPod: targetPod, Mode: v1.MigrationPreCopy, MigrationConfiguration: limits.Configuration()}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func withTargetNode(s *v1.VirtualMachineInstanceMigrationState) { s.TargetNode = "node-b" }

func started(s *v1.VirtualMachineInstanceMigrationState) {
	withTargetNode(s)
	s.TargetNodeAddress = "node-b"
	s.StartTimestamp = &now
}

func completed(s *v1.VirtualMachineInstanceMigrationState) {
	started(s)
	s.Completed = true
}

// target is the target Pod, bound to node-b, running and ready unless mutate says otherwise.
func target(mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: targetPod, Namespace: "ns", UID: "target-uid",
			CreationTimestamp: metav1.NewTime(now.Add(-time.Minute)), Labels: map[string]string{v1.MigrationJobLabel: "mig-uid"}},
		Spec: corev1.PodSpec{NodeName: "node-b", Containers: []corev1.Container{{Name: "compute", Image: "launcher:v2"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func unbound(p *corev1.Pod) {
	p.Spec.NodeName = ""
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = nil
}

func unschedulableFor(d time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		unbound(p)
		p.CreationTimestamp = metav1.NewTime(now.Add(-d))
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/2 nodes are available", LastTransitionTime: metav1.NewTime(now.Add(-d))}}
	}
}

func source() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sourcePod, Namespace: "ns", UID: "source-uid"}}
}

// want is what a case expects of the decision; vmiState nil means "the VMI is not changed".
type want struct {
	phase                              v1.VirtualMachineInstanceMigrationPhase
	create, deleteTarget, deleteSource bool
	release, recheck                   bool
	vmiState                           *v1.VirtualMachineInstanceMigrationState
	failure                            string // in the migration's migrationState.failureReason
	activePods                         map[types.UID]string
	nodeName                           string
	phases                             []v1.VirtualMachineInstanceMigrationPhase // transitions recorded by this decision
	abortCondition                     bool
}

func TestDecide(t *testing.T) {
	unmigratable := vmiWith(nil)
	unmigratable.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable,
		Status: v1.ConditionFalse, Reason: "DisksNotLiveMigratable", Message: "PVC disk is not shared"}}
	notRunning := vmiWith(nil)
	notRunning.Status.Phase, notRunning.Status.NodeName = v1.Scheduled, ""
	vmiDeleting := vmiWith(stateOfM(started))
	vmiDeleting.DeletionTimestamp = &now
	onTarget := vmiWith(stateOfM(completed))
	onTarget.Status.NodeName = "node-b"
	onTarget.Status.MigrationState.TargetNodeDomainDetected = true
	contradicting := migrationOf(map[string]string{"zone": "b"})
	contradicting.Status.Phase = v1.MigrationPending
	contradictingVMI := vmiWith(nil)
	contradictingVMI.Spec.NodeSelector = map[string]string{"zone": "a"}
	afterFirst := vmiWith(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "old", SourcePod: sourcePod, TargetPod: "virt-launcher-vm1-old", Completed: true})
	sixFromCluster := []flight{{"a", "x"}, {"b", "x"}, {"c", "y"}, {"d", "y"}, {"e", "z"}}
	twoFromNodeA := []flight{{"a", "node-a"}, {"b", "node-a"}}
	newState := stateOfM(nil)

	cases := []struct {
		name string
		in   input
		want want
	}{
		{name: "pending starts: target Pod, VMI state, Scheduling",
			in:   input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(nil)},
			want: want{phase: v1.MigrationScheduling, create: true, vmiState: newState, phases: phases(v1.MigrationScheduling)}},
		{name: "pending replaces an ended migration's state; the source is that migration's target",
			in: input{m: migrationIn(v1.MigrationPending), vmi: afterFirst},
			want: want{phase: v1.MigrationScheduling, create: true, vmiState: stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				s.SourcePod = "virt-launcher-vm1-old"
			})}},
		{name: "pending with the target Pod made by an earlier pass ignores the limits",
			in:   input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(nil), target: target(unbound), inFlight: sixFromCluster},
			want: want{phase: v1.MigrationScheduling, vmiState: newState}},
		{name: "pending whose state an earlier pass wrote goes on",
			in:   input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(stateOfM(nil))},
			want: want{phase: v1.MigrationScheduling, create: true}},
		{name: "VMI missing", in: input{m: migrationIn(v1.MigrationPending)},
			want: want{phase: v1.MigrationFailed, failure: "does not exist"}},
		{name: "VMI not running", in: input{m: migrationIn(v1.MigrationPending), vmi: notRunning},
			want: want{phase: v1.MigrationFailed, failure: "not running (phase Scheduled)"}},
		{name: "VMI not migratable", in: input{m: migrationIn(v1.MigrationPending), vmi: unmigratable},
			want: want{phase: v1.MigrationFailed, failure: "PVC disk is not shared"}},
		{name: "target Pod cannot be rendered", in: input{m: contradicting, vmi: contradictingVMI},
			want: want{phase: v1.MigrationFailed, failure: "can only narrow"}},
		{name: "another migration of the VMI in flight: stays pending",
			in:   input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "other", TargetPod: "x"})},
			want: want{phase: v1.MigrationPending}},
		{name: "cluster limit", in: input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(nil), inFlight: sixFromCluster},
			want: want{phase: v1.MigrationPending, recheck: true}},
		{name: "node limit", in: input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(nil), inFlight: twoFromNodeA},
			want: want{phase: v1.MigrationPending, recheck: true}},
		{name: "other node's migrations do not count against the node limit",
			in:   input{m: migrationIn(v1.MigrationPending), vmi: vmiWith(nil), inFlight: []flight{{"a", "node-c"}, {"b", "node-c"}}},
			want: want{phase: v1.MigrationScheduling, create: true}},

		{name: "scheduling waits for the target Pod, with its deadline",
			in:   input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(stateOfM(nil)), target: target(unbound)},
			want: want{phase: v1.MigrationScheduling, recheck: true}},
		{name: "target Pod unschedulable too long",
			in: input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(stateOfM(nil)), target: target(unschedulableFor(6 * time.Minute))},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "unschedulable for more than 5m0s", vmiState: stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				s.Failed, s.EndTimestamp = true, &now
				s.FailureReason = "the target Pod " + targetPod + " has been unschedulable for more than 5m0s: 0/2 nodes are available"
			})}},
		{name: "target Pod not running 15 minutes after creation",
			in: input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(stateOfM(nil)), target: target(func(p *corev1.Pod) {
				unbound(p)
				p.CreationTimestamp = metav1.NewTime(now.Add(-16 * time.Minute))
			})},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "not running 15m0s after its creation"}},
		{name: "target Pod gone while scheduling",
			in:   input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(stateOfM(nil))},
			want: want{phase: v1.MigrationFailed, failure: "no longer exists"}},
		{name: "target Pod ready: Scheduled, VMI gets the target node and Pod",
			in: input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(stateOfM(nil)), target: target(nil)},
			want: want{phase: v1.MigrationScheduled, vmiState: stateOfM(withTargetNode), phases: phases(v1.MigrationScheduled),
				activePods: map[types.UID]string{"source-uid": "node-a", "target-uid": "node-b"}}},
		{name: "scheduled waits for the VMI's target node",
			in:   input{m: migrationIn(v1.MigrationScheduled), vmi: vmiWith(stateOfM(nil)), target: target(nil)},
			want: want{phase: v1.MigrationScheduled, vmiState: stateOfM(withTargetNode)}},
		{name: "scheduled with the target node written: PreparingTarget",
			in:   input{m: migrationIn(v1.MigrationScheduled), vmi: vmiWith(stateOfM(withTargetNode)), target: target(nil)},
			want: want{phase: v1.MigrationPreparingTarget, phases: phases(v1.MigrationPreparingTarget)}},
		{name: "target node agent ready: TargetReady",
			in: input{m: migrationIn(v1.MigrationPreparingTarget), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				withTargetNode(s)
				s.TargetNodeAddress = "node-b"
			})), target: target(nil)},
			want: want{phase: v1.MigrationTargetReady}},
		{name: "started while preparing: TargetReady and Running recorded",
			in:   input{m: migrationIn(v1.MigrationPreparingTarget), vmi: vmiWith(stateOfM(started)), target: target(nil)},
			want: want{phase: v1.MigrationRunning, phases: phases(v1.MigrationTargetReady, v1.MigrationRunning)}},
		{name: "target Pod ended before the start",
			in: input{m: migrationIn(v1.MigrationTargetReady), vmi: vmiWith(stateOfM(withTargetNode)), target: target(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
			})},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "ended", activePods: map[types.UID]string{"source-uid": "node-a"}}},
		{name: "started before the controller saw the target node, target Pod gone: the node agents report",
			in:   input{m: migrationIn(v1.MigrationScheduled), vmi: vmiWith(stateOfM(started))},
			want: want{phase: v1.MigrationRunning, phases: phases(v1.MigrationPreparingTarget, v1.MigrationTargetReady, v1.MigrationRunning)}},
		{name: "running without target Pod: the source node agent reports",
			in:   input{m: migrationIn(v1.MigrationRunning), vmi: vmiWith(stateOfM(started))},
			want: want{phase: v1.MigrationRunning}},

		{name: "completed: the VMI moves to the target, the source Pod goes",
			in: input{m: migrationIn(v1.MigrationRunning), vmi: vmiWith(stateOfM(completed)), target: target(nil), source: source()},
			want: want{phase: v1.MigrationRunning, deleteSource: true, nodeName: "node-b",
				activePods: map[types.UID]string{"target-uid": "node-b"}}},
		{name: "completed before the controller saw the target ready: the phases are recorded",
			in: input{m: migrationIn(v1.MigrationPreparingTarget), vmi: vmiWith(stateOfM(completed)), target: target(nil), source: source()},
			want: want{phase: v1.MigrationRunning, deleteSource: true, nodeName: "node-b",
				phases: phases(v1.MigrationTargetReady, v1.MigrationRunning)}},
		{name: "completed and found on the target: Succeeded",
			in:   input{m: migrationIn(v1.MigrationRunning), vmi: onTarget, target: target(nil)},
			want: want{phase: v1.MigrationSucceeded, nodeName: "node-b", phases: phases(v1.MigrationSucceeded)}},
		{name: "arrival reported by the target's agent: the VMI moves, the source Pod goes, Succeeded in one pass",
			in: input{m: migrationIn(v1.MigrationRunning), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				completed(s)
				s.TargetNodeDomainDetected = true
			})), target: target(nil), source: source()},
			want: want{phase: v1.MigrationSucceeded, deleteSource: true, nodeName: "node-b",
				activePods: map[types.UID]string{"target-uid": "node-b"}, phases: phases(v1.MigrationSucceeded)}},
		{name: "failed: the target Pod goes and leaves the active Pods",
			in: input{m: migrationIn(v1.MigrationRunning), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				started(s)
				s.Failed, s.FailureReason = true, "libvirt: connection reset"
			})), target: target(nil)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "connection reset", activePods: map[types.UID]string{"source-uid": "node-a"}}},
		{name: "failed as its target Pod was deleted: the reason says so",
			in: input{m: migrationIn(v1.MigrationRunning), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				started(s)
				s.Failed, s.FailureReason = true, "internal error: client socket is closed"
			})), target: target(func(p *corev1.Pod) { p.DeletionTimestamp = &now })},
			want: want{phase: v1.MigrationFailed, failure: "the target launcher Pod " + targetPod + " was deleted: internal error: client socket is closed",
				activePods: map[types.UID]string{"source-uid": "node-a"}}},
		{name: "failed without target Pod: the target node's entry goes",
			in: input{m: migrationIn(v1.MigrationRunning), vmi: func() *v1.VirtualMachineInstance {
				v := vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) { started(s); s.Failed = true }))
				v.Status.ActivePods["target-uid"] = "node-b"
				return v
			}()},
			want: want{phase: v1.MigrationFailed, activePods: map[types.UID]string{"source-uid": "node-a"}}},
		{name: "VMI deleted mid-migration", in: input{m: migrationIn(v1.MigrationRunning), vmi: vmiDeleting, target: target(nil)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "being deleted"}},
		{name: "VMI state belongs to another migration",
			in:   input{m: migrationIn(v1.MigrationScheduling), vmi: vmiWith(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "other"}), target: target(nil)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, failure: "no longer belongs"}},

		{name: "succeeded is final", in: input{m: migrationIn(v1.MigrationSucceeded), vmi: vmiWith(nil)},
			want: want{phase: v1.MigrationSucceeded}},
		{name: "deleted after it ended: released", in: input{m: deleted(migrationIn(v1.MigrationFailed))},
			want: want{phase: v1.MigrationFailed, release: true}},
		{name: "deleted while pending", in: input{m: deleted(migrationIn(v1.MigrationPending)), vmi: vmiWith(nil), target: target(unbound)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, release: true, abortCondition: true, failure: AbortedBeforeStart}},
		{name: "deleted before the start: aborted by the controller",
			in: input{m: deleted(migrationIn(v1.MigrationPreparingTarget)), vmi: vmiWith(stateOfM(withTargetNode)), target: target(nil)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, release: true, abortCondition: true, failure: AbortedBeforeStart,
				vmiState: stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
					withTargetNode(s)
					s.Failed, s.FailureReason, s.EndTimestamp = true, AbortedBeforeStart, &now
					s.AbortRequested, s.AbortStatus = true, v1.MigrationAbortSucceeded
				})}},
		{name: "deleted while running: abort requested of the source node agent",
			in: input{m: deleted(migrationIn(v1.MigrationRunning)), vmi: vmiWith(stateOfM(started)), target: target(nil)},
			want: want{phase: v1.MigrationRunning, abortCondition: true, vmiState: stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				started(s)
				s.AbortRequested, s.AbortStatus = true, v1.MigrationAbortInProgress
			})}},
		{name: "aborted by the source node agent: Failed and released",
			in: input{m: deleted(migrationIn(v1.MigrationRunning)), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				started(s)
				s.AbortRequested, s.AbortStatus, s.Failed = true, v1.MigrationAbortSucceeded, true
			})), target: target(nil)},
			want: want{phase: v1.MigrationFailed, deleteTarget: true, release: true, abortCondition: true}},
		{name: "too late to abort: completes as usual, released once Succeeded",
			in: input{m: deleted(migrationIn(v1.MigrationRunning)), vmi: vmiWith(stateOfM(func(s *v1.VirtualMachineInstanceMigrationState) {
				completed(s)
				s.AbortRequested, s.AbortStatus = true, v1.MigrationAbortFailed
			})), target: target(nil), source: source()},
			want: want{phase: v1.MigrationRunning, deleteSource: true, nodeName: "node-b", abortCondition: true}},
		{name: "deleted with its VMI gone: released", in: input{m: deleted(migrationIn(v1.MigrationRunning))},
			want: want{phase: v1.MigrationFailed, release: true, abortCondition: true, failure: "does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.launcher, c.in.limits, c.in.now = opts, limits, now
			before := c.in.m.DeepCopy()
			var vmiBefore *v1.VirtualMachineInstance
			if c.in.vmi != nil {
				vmiBefore = c.in.vmi.DeepCopy()
			}
			d := decide(c.in)
			check(t, c.in, d, c.want)
			if !equality.Semantic.DeepEqual(before, c.in.m) || (vmiBefore != nil && !equality.Semantic.DeepEqual(vmiBefore, c.in.vmi)) {
				t.Error("decide modified its input")
			}
		})
	}
}

func phases(p ...v1.VirtualMachineInstanceMigrationPhase) []v1.VirtualMachineInstanceMigrationPhase {
	return p
}

func check(t *testing.T, in input, d decision, w want) {
	t.Helper()
	if d.status.Phase != w.phase {
		t.Errorf("phase = %s, want %s", d.status.Phase, w.phase)
	}
	if (d.create != nil) != w.create || d.deleteTarget != w.deleteTarget || d.deleteSource != w.deleteSource || d.release != w.release {
		t.Errorf("create %v deleteTarget %v deleteSource %v release %v, want %v %v %v %v",
			d.create != nil, d.deleteTarget, d.deleteSource, d.release, w.create, w.deleteTarget, w.deleteSource, w.release)
	}
	if (d.recheck > 0) != w.recheck {
		t.Errorf("recheck = %v, want one: %v", d.recheck, w.recheck)
	}
	if d.create != nil && (d.create.Name != targetPod || d.create.Labels[v1.MigrationJobLabel] != "mig-uid") {
		t.Errorf("target Pod to create: %s %v", d.create.Name, d.create.Labels)
	}
	if w.vmiState != nil {
		if d.vmiStatus == nil {
			t.Fatal("the VMI is not written")
		}
		if diff := cmp.Diff(w.vmiState, d.vmiStatus.MigrationState); diff != "" {
			t.Errorf("VMI migrationState (-want +got):\n%s", diff)
		}
	}
	if w.activePods != nil && !equality.Semantic.DeepEqual(w.activePods, d.vmiStatus.ActivePods) {
		t.Errorf("activePods = %v, want %v", d.vmiStatus.ActivePods, w.activePods)
	}
	if w.nodeName != "" && d.vmiStatus.NodeName != w.nodeName {
		t.Errorf("nodeName = %q, want %q", d.vmiStatus.NodeName, w.nodeName)
	}
	s := d.status.MigrationState
	if w.failure != "" && (s == nil || !s.Failed || !strings.Contains(s.FailureReason, w.failure)) {
		t.Errorf("migration's migrationState %+v, want failed with %q", s, w.failure)
	}
	if d.vmiStatus != nil && d.vmiStatus.MigrationState != nil && d.vmiStatus.MigrationState.MigrationUID == in.m.UID &&
		!equality.Semantic.DeepEqual(s, d.vmiStatus.MigrationState) {
		t.Errorf("the migration's migrationState %+v is not the VMI's %+v", s, d.vmiStatus.MigrationState)
	}
	if w.phases != nil {
		recorded := d.status.PhaseTransitionTimestamps[len(in.m.Status.PhaseTransitionTimestamps):]
		var got []v1.VirtualMachineInstanceMigrationPhase
		for _, ts := range recorded {
			got = append(got, ts.Phase)
			if !ts.PhaseTransitionTimestamp.Equal(&now) {
				t.Errorf("transition to %s at %v, want %v", ts.Phase, ts.PhaseTransitionTimestamp, now)
			}
		}
		if !cmp.Equal(got, w.phases) {
			t.Errorf("recorded phases %v, want %v", got, w.phases)
		}
	}
	hasAbort := false
	for _, c := range d.status.Conditions {
		hasAbort = hasAbort || (c.Type == v1.VirtualMachineInstanceMigrationAbortRequested && c.Status == v1.ConditionTrue)
	}
	if hasAbort != w.abortCondition {
		t.Errorf("abort condition %v, want %v", hasAbort, w.abortCondition)
	}
}

func TestTargetTrouble(t *testing.T) {
	cases := []struct {
		name        string
		pod         *corev1.Pod
		phase       v1.VirtualMachineInstanceMigrationPhase
		want        string
		wantRecheck time.Duration
	}{
		{"running", target(nil), v1.MigrationScheduling, "", 0},
		{"pending, created a minute ago", target(unbound), v1.MigrationScheduling, "", 14 * time.Minute},
		{"unschedulable for 2 minutes", target(unschedulableFor(2 * time.Minute)), v1.MigrationScheduling, "", 3 * time.Minute},
		{"unschedulable for 5 minutes", target(unschedulableFor(5 * time.Minute)), v1.MigrationScheduling, "unschedulable", 0},
		{"timeouts apply only while scheduling", target(unschedulableFor(time.Hour)), v1.MigrationScheduled, "", 0},
		{"being deleted", target(func(p *corev1.Pod) { p.DeletionTimestamp = &now }), v1.MigrationPreparingTarget, "being deleted", 0},
		{"gone", nil, v1.MigrationTargetReady, "no longer exists", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, recheck := targetTrouble(c.pod, c.phase, now.Time)
			if (c.want == "") != (msg == "") || !strings.Contains(msg, c.want) || recheck != c.wantRecheck {
				t.Errorf("targetTrouble = %q, %v; want %q, %v", msg, recheck, c.want, c.wantRecheck)
			}
		})
	}
}

func TestPreparationTrouble(t *testing.T) {
	t0 := time.Unix(10000, 0)
	st := v1.VirtualMachineInstanceMigrationStatus{Phase: v1.MigrationTargetReady, PhaseTransitionTimestamps: []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{
		{Phase: v1.MigrationScheduled, PhaseTransitionTimestamp: metav1.NewTime(t0.Add(-time.Minute))},
		{Phase: v1.MigrationPreparingTarget, PhaseTransitionTimestamp: metav1.NewTime(t0)},
		{Phase: v1.MigrationTargetReady, PhaseTransitionTimestamp: metav1.NewTime(t0.Add(time.Second))},
	}}
	if msg, recheck := preparationTrouble(st, t0.Add(time.Minute), 0); msg != "" || recheck != PrepareTimeout-time.Minute {
		t.Errorf("within the timeout: %q, recheck %s", msg, recheck)
	}
	if msg, recheck := preparationTrouble(st, t0.Add(time.Minute), time.Second); msg != "" || recheck != time.Second {
		t.Errorf("an earlier recheck is kept: %q, %s", msg, recheck)
	}
	if msg, _ := preparationTrouble(st, t0.Add(PrepareTimeout), 0); !strings.Contains(msg, "not ready") {
		t.Errorf("past the timeout: %q", msg)
	}
	st.Phase = v1.MigrationRunning
	if msg, recheck := preparationTrouble(st, t0.Add(time.Hour), 0); msg != "" || recheck != 0 {
		t.Errorf("running: %q %s", msg, recheck)
	}
}
