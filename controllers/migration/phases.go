package migration

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// input is everything the phase computation looks at; the controller gathers it from its
// caches (and the API where the Pod cache may lag).
type input struct {
	m *v1.VirtualMachineInstanceMigration
	// vmi is the migrated VMI; nil when it does not exist.
	vmi *v1.VirtualMachineInstance
	// target is the migration's target Pod, controlled by vmi; nil when there is none.
	target *corev1.Pod
	// source is the Pod the VMI's migration state names as source, controlled by vmi; the
	// controller looks it up only once the migration completed (it deletes it then).
	source *corev1.Pod
	// running is the launcher Pod the VMI runs in (launcherpodapi.CurrentPodName), looked up
	// while the migration has no target Pod: the target mounts the images it runs on.
	running *corev1.Pod
	// launcher renders the target Pod.
	launcher launcherpod.Options
	// inFlight are the other migrations in the cluster that count against the parallel limits.
	inFlight []flight
	// limits are the cluster's migration settings.
	limits defaults.MigrationSettings
	// policy is the MigrationPolicy that selects the VMI (looked up when the migration starts).
	policy *v1alpha1.MigrationPolicy
	now    metav1.Time
}

// decision is what the controller does about a migration. The controller carries it out in
// this order, stopping at the first error: create the target Pod, write the VMI's status,
// delete Pods, write the migration's status, release its finalizer.
type decision struct {
	// status is the migration's new status.
	status v1.VirtualMachineInstanceMigrationStatus
	// vmiStatus is the VMI's new status; nil when the VMI is not to be written.
	vmiStatus *v1.VirtualMachineInstanceStatus
	// create is the target Pod to create (nil: none).
	create *corev1.Pod
	// deleteTarget and deleteSource delete input.target and input.source.
	deleteTarget, deleteSource bool
	// release removes the migration's finalizer.
	release bool
	// recheck is when the migration must be looked at again (0: only on change).
	recheck time.Duration
}

// decide is the phase computation of migration in.m: a pure function of its input.
func decide(in input) decision {
	d := decision{status: *in.m.Status.DeepCopy()}
	if d.status.Phase == v1.MigrationPhaseUnset {
		d.setPhase(v1.MigrationPending, in.now)
	}
	deleting := in.m.DeletionTimestamp != nil
	if ended(d.status.Phase) {
		d.release = deleting
		return d
	}
	if deleting {
		d.setCondition(v1.VirtualMachineInstanceMigrationCondition{Type: v1.VirtualMachineInstanceMigrationAbortRequested,
			Status: v1.ConditionTrue, Reason: v1.ReasonMigrationDeleted, Message: "the migration was deleted: it is aborted"}, in.now)
	}
	if msg := vmiGone(in.vmi); msg != "" {
		d.fail(in, msg)
		d.deleteTarget = deletable(in.target)
	} else {
		d.vmiStatus = in.vmi.Status.DeepCopy()
		observed := stateOf(in.vmi, in)
		switch {
		case observed == nil && deleting:
			d.deleteTarget = deletable(in.target)
			d.fail(in, AbortedBeforeStart)
		case observed == nil && d.status.Phase == v1.MigrationPending:
			d.pending(in)
		case observed == nil:
			d.deleteTarget = deletable(in.target)
			d.fail(in, "the VMI's migration state no longer belongs to this migration")
		default:
			d.progress(in, observed)
		}
	}
	if s := d.state(in); s != nil {
		d.status.MigrationState = s.DeepCopy()
	}
	d.release = deleting && ended(d.status.Phase)
	return d
}

// vmiGone says why a VMI cannot be migrated any more ("" when it can).
func vmiGone(vmi *v1.VirtualMachineInstance) string {
	switch {
	case vmi == nil:
		return "the VMI does not exist"
	case vmi.DeletionTimestamp != nil:
		return "the VMI is being deleted"
	case vmi.Status.Phase == v1.Succeeded || vmi.Status.Phase == v1.Failed:
		return fmt.Sprintf("the VMI has ended (phase %s)", vmi.Status.Phase)
	}
	return ""
}

// pending starts a Pending migration that the VMI holds no state of yet: it checks the VMI,
// the VMI's other migrations and the parallel limits, renders the target Pod and records the
// migration in the VMI's migration state.
func (d *decision) pending(in input) {
	vmi := in.vmi
	if vmi.Status.Phase != v1.Running || vmi.Status.NodeName == "" {
		d.fail(in, fmt.Sprintf("the VMI is not running (phase %s)", vmi.Status.Phase))
		return
	}
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c != nil && c.Status == v1.ConditionFalse {
		d.fail(in, fmt.Sprintf("the VMI cannot be live-migrated: %s: %s", c.Reason, c.Message))
		return
	}
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID != in.m.UID && !s.Completed && !s.Failed {
		// Another migration of the VMI is in flight; its end updates the VMI, which requeues.
		return
	}
	if in.target == nil {
		if held := overLimit(in.inFlight, vmi.Status.NodeName, in.limits); held != "" {
			d.recheck = LimitRecheck
			return
		}
	}
	pod, err := TargetPod(in.m, vmi, in.targetOptions())
	if err != nil {
		d.fail(in, "cannot render the target Pod: "+err.Error())
		return
	}
	if in.target == nil {
		d.create = pod
	}
	d.vmiStatus.MigrationState = &v1.VirtualMachineInstanceMigrationState{
		MigrationUID: in.m.UID,
		SourceNode:   vmi.Status.NodeName,
		SourcePod:    launcherpodapi.CurrentPodName(vmi),
		TargetPod:    pod.Name,
		Mode:         v1.MigrationPreCopy,
		// The node agents run the migration with this configuration.
		MigrationConfiguration: withPolicy(in.limits, in.policy).Configuration(),
	}
	if in.policy != nil {
		d.vmiStatus.MigrationState.MigrationPolicyName = &in.policy.Name
	}
	d.setPhase(v1.MigrationScheduling, in.now)
}

// progress moves on a migration the VMI holds the state of, as observed in the VMI.
func (d *decision) progress(in input, observed *v1.VirtualMachineInstanceMigrationState) {
	switch {
	case observed.Failed:
		d.cleanUpFailed(in)
		return
	case observed.Completed:
		d.complete(in, observed)
		return
	}
	if in.m.DeletionTimestamp != nil {
		if observed.StartTimestamp == nil {
			d.abortBeforeStart(in)
			return
		}
		d.requestAbort(in)
	}
	if observed.StartTimestamp == nil && d.status.Phase != v1.MigrationPending {
		msg, recheck := targetTrouble(in.target, d.status.Phase, in.now.Time)
		if msg == "" {
			msg, recheck = preparationTrouble(d.status, in.now.Time, recheck)
		}
		if msg != "" {
			d.failBeforeStart(in, msg)
			return
		}
		d.recheck = recheck
	}
	d.advance(in, observed)
}

// targetOptions render the target Pod with the images the VMI runs on.
func (in input) targetOptions() launcherpod.Options {
	opts := in.launcher
	opts.PinnedImages = launcherpod.RunningImages(in.running, in.vmi)
	return opts
}

// advance moves the migration through the phases its target Pod and the node agents' reports
// allow, recording every phase it passes.
func (d *decision) advance(in input, observed *v1.VirtualMachineInstanceMigrationState) {
	for {
		switch d.status.Phase {
		case v1.MigrationPending:
			// An earlier pass recorded the migration in the VMI but did not get further.
			if in.target == nil {
				pod, err := TargetPod(in.m, in.vmi, in.targetOptions())
				if err != nil {
					d.failBeforeStart(in, "cannot render the target Pod: "+err.Error())
					return
				}
				d.create = pod
			}
			d.setPhase(v1.MigrationScheduling, in.now)
		case v1.MigrationScheduling:
			if !launcherpodapi.Started(in.target) {
				return
			}
			d.recordTarget(in)
			d.setPhase(v1.MigrationScheduled, in.now)
		case v1.MigrationScheduled:
			d.recordTarget(in)
			if observed.TargetNode == "" || (in.target != nil && observed.TargetNode != in.target.Spec.NodeName) {
				return
			}
			d.setPhase(v1.MigrationPreparingTarget, in.now)
		case v1.MigrationPreparingTarget:
			if observed.TargetNodeAddress == "" {
				return
			}
			d.setPhase(v1.MigrationTargetReady, in.now)
		case v1.MigrationTargetReady:
			if observed.StartTimestamp == nil {
				return
			}
			d.setPhase(v1.MigrationRunning, in.now)
		default:
			return
		}
	}
}

// recordTarget writes the running target Pod's node into the VMI's migration state and adds
// the Pod to the VMI's active Pods.
func (d *decision) recordTarget(in input) {
	if in.target == nil || in.target.Spec.NodeName == "" {
		return
	}
	node := in.target.Spec.NodeName
	d.state(in).TargetNode = node
	if d.vmiStatus.ActivePods == nil {
		d.vmiStatus.ActivePods = map[types.UID]string{}
	}
	d.vmiStatus.ActivePods[in.target.UID] = node
}

// complete finishes a migration a node agent reports completed: the VMI moves to the target
// node and Pod (one write), the source Pod is deleted, and the migration succeeds once the
// target node agent has found the guest there. The target's agent reports that with the
// completion, as soon as the guest arrived; the source's agent reports the completion alone
// (its libvirt knows later), and the target's agent then finds the guest once the VMI moved.
// The VMI is written before the migration, so Succeeded never shows before the VMI moved.
func (d *decision) complete(in input, observed *v1.VirtualMachineInstanceMigrationState) {
	node := observed.TargetNode
	if node == "" && in.target != nil {
		node = in.target.Spec.NodeName
	}
	if node == "" {
		// Not a report a node agent makes; wait for the target node to be recorded.
		return
	}
	// Record the phases a quick migration went through before the controller saw them.
	d.advance(in, observed)
	if phaseIndex(d.status.Phase) < phaseIndex(v1.MigrationRunning) {
		d.setPhase(v1.MigrationRunning, in.now)
	}
	d.vmiStatus.NodeName = node
	if in.target != nil {
		d.vmiStatus.ActivePods = map[types.UID]string{in.target.UID: node}
		for _, c := range in.target.Spec.Containers {
			if c.Name == launcherpodapi.ContainerName {
				d.vmiStatus.LauncherContainerImageVersion = c.Image
			}
		}
	}
	d.deleteSource = deletable(in.source) && (in.target == nil || in.source.UID != in.target.UID)
	if observed.TargetNodeDomainDetected {
		d.setPhase(v1.MigrationSucceeded, in.now)
	}
}

// failBeforeStart fails a migration the source node agent has not started: the VMI's
// migration state says so (the node agents then leave it), the target Pod goes.
func (d *decision) failBeforeStart(in input, reason string) {
	s := d.state(in)
	s.Failed = true
	s.FailureReason = reason
	s.EndTimestamp = &in.now
	d.cleanUpFailed(in)
}

// cleanUpFailed ends a failed migration: its target Pod is deleted and leaves the VMI's active
// Pods.
func (d *decision) cleanUpFailed(in input) {
	observed := d.state(in)
	if why := targetLost(in.target, observed); why != "" && !strings.HasPrefix(observed.FailureReason, why) {
		// libvirt says only that its connection closed ("client socket is closed").
		if observed.FailureReason != "" {
			why += ": " + observed.FailureReason
		}
		observed.FailureReason = why
	}
	switch {
	case in.target != nil:
		delete(d.vmiStatus.ActivePods, in.target.UID)
	case observed.TargetNode != "" && observed.TargetNode != observed.SourceNode:
		// The target Pod is gone and its UID unknown: drop whatever ran on the target node.
		for uid, node := range d.vmiStatus.ActivePods {
			if node == observed.TargetNode {
				delete(d.vmiStatus.ActivePods, uid)
			}
		}
	}
	d.deleteTarget = deletable(in.target)
	d.setPhase(v1.MigrationFailed, in.now)
}

// targetLost says why a migration that failed while it ran lost its target launcher Pod
// target (nil: gone from the cluster): deleted, gone or ended. It says nothing of an aborted
// migration, whose target is deleted after it failed, or of a target that still runs.
func targetLost(target *corev1.Pod, observed *v1.VirtualMachineInstanceMigrationState) string {
	if observed == nil || observed.AbortRequested || observed.StartTimestamp == nil || observed.TargetPod == "" {
		return ""
	}
	switch {
	case target == nil:
		return fmt.Sprintf("the target launcher Pod %s no longer exists", observed.TargetPod)
	case target.DeletionTimestamp != nil:
		return fmt.Sprintf("the target launcher Pod %s was deleted", target.Name)
	case target.Status.Phase == corev1.PodFailed || target.Status.Phase == corev1.PodSucceeded:
		return fmt.Sprintf("the target launcher Pod %s ended (%s)", target.Name, target.Status.Phase)
	}
	return ""
}

// fail ends a migration that the VMI holds no state of, keeping the reason in the migration's
// own migration state.
func (d *decision) fail(in input, reason string) {
	if d.status.MigrationState == nil || d.status.MigrationState.MigrationUID != in.m.UID {
		d.status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: in.m.UID}
	}
	d.status.MigrationState.Failed = true
	d.status.MigrationState.FailureReason = reason
	d.status.MigrationState.EndTimestamp = &in.now
	if in.m.DeletionTimestamp != nil {
		d.status.MigrationState.AbortRequested = true
		d.status.MigrationState.AbortStatus = v1.MigrationAbortSucceeded
	}
	d.setPhase(v1.MigrationFailed, in.now)
}

// state is the migration's state in the VMI's new status, nil when the VMI holds none of it.
func (d *decision) state(in input) *v1.VirtualMachineInstanceMigrationState {
	if d.vmiStatus == nil {
		return nil
	}
	if s := d.vmiStatus.MigrationState; s != nil && s.MigrationUID == in.m.UID {
		return s
	}
	return nil
}

// stateOf is the migration's state as the VMI holds it, nil when it holds none of it.
func stateOf(vmi *v1.VirtualMachineInstance, in input) *v1.VirtualMachineInstanceMigrationState {
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID == in.m.UID {
		return s
	}
	return nil
}

// setPhase moves the migration to phase and records when.
func (d *decision) setPhase(phase v1.VirtualMachineInstanceMigrationPhase, now metav1.Time) {
	if d.status.Phase == phase {
		return
	}
	d.status.Phase = phase
	d.status.PhaseTransitionTimestamps = append(d.status.PhaseTransitionTimestamps,
		v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: now})
}

// setCondition sets c, keeping its transition time when its status did not change.
func (d *decision) setCondition(c v1.VirtualMachineInstanceMigrationCondition, now metav1.Time) {
	for i := range d.status.Conditions {
		old := &d.status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime, c.LastProbeTime = old.LastTransitionTime, old.LastProbeTime
		if old.Status != c.Status {
			c.LastTransitionTime = now
		}
		*old = c
		return
	}
	c.LastTransitionTime = now
	d.status.Conditions = append(d.status.Conditions, c)
}

// ended reports whether a migration in phase is over for good.
func ended(phase v1.VirtualMachineInstanceMigrationPhase) bool {
	return phase == v1.MigrationSucceeded || phase == v1.MigrationFailed
}

// phaseOrder lists the phases a migration moves through.
var phaseOrder = []v1.VirtualMachineInstanceMigrationPhase{v1.MigrationPending, v1.MigrationScheduling,
	v1.MigrationScheduled, v1.MigrationPreparingTarget, v1.MigrationTargetReady, v1.MigrationRunning}

// phaseIndex is the position of phase in phaseOrder (len(phaseOrder) for the final phases).
func phaseIndex(phase v1.VirtualMachineInstanceMigrationPhase) int {
	for i, p := range phaseOrder {
		if p == phase {
			return i
		}
	}
	return len(phaseOrder)
}

// deletable reports whether pod exists and is not being deleted yet.
func deletable(pod *corev1.Pod) bool {
	return pod != nil && pod.DeletionTimestamp == nil
}
