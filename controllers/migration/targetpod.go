package migration

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

// hostnameLabel names a node in addedNodeSelector.
const hostnameLabel = "kubernetes.io/hostname"

// KubeVirt's timeouts of a target Pod that does not start: a migration fails when its target
// Pod stays unschedulable this long, or is not running this long after its creation.
const (
	UnschedulableTimeout = 5 * time.Minute
	PendingTimeout       = 15 * time.Minute
	// PrepareTimeout bounds PreparingTarget and TargetReady together (Vireo's): a target whose
	// node agent cannot prepare it (an image that does not pull there, an agent gone) or a
	// source that never starts fails the migration instead of holding it forever.
	PrepareTimeout = 5 * time.Minute
)

// InPlace says whether migration m moves the VMI to a new launcher on its own node: its
// addedNodeSelector names the VMI's node (Vireo's; KubeVirt always moves to another node).
func InPlace(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) bool {
	node, ok := m.Spec.AddedNodeSelector[hostnameLabel]
	return ok && node != "" && node == vmi.Status.NodeName
}

// TargetPod renders the target launcher Pod of migration m of vmi: the VMI's own launcher Pod
// (same resources, volumes and scheduling) under another name, labelled with the migration's
// UID, with m's addedNodeSelector added to the node selector and, unless the migration is in
// place, kept off the VMI's current node. The target mounts the images the source runs on
// (opts.PinnedImages); an image that is neither pinned nor named by digest is refused, since
// the guest's overlay would land on another image's blocks.
func TargetPod(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, opts launcherpod.Options) (*corev1.Pod, error) {
	if vmi.Status.NodeName == "" {
		return nil, fmt.Errorf("VMI %s/%s has no node: it is not running", vmi.Namespace, vmi.Name)
	}
	if unpinned := launcherpod.UnpinnedImages(vmi, opts.PinnedImages); len(unpinned) > 0 {
		return nil, fmt.Errorf("the digest of the image(s) the guest runs on is not known (%s), so the target could mount another image under the same tag: "+
			"name the images by digest (image@sha256:...), or let vireo-controller reach their registry without credentials, so that it pins the tags to digests when it creates a VMI's launcher Pod",
			strings.Join(unpinned, ", "))
	}
	pod, err := launcherpod.Render(vmi, opts)
	if err != nil {
		return nil, err
	}
	pod.Name = launcherpodapi.PodName(vmi.Name, string(m.UID))
	pod.Labels[v1.MigrationJobLabel] = string(m.UID)
	if len(m.Spec.AddedNodeSelector) > 0 {
		if pod.Spec.NodeSelector == nil {
			pod.Spec.NodeSelector = map[string]string{}
		}
		for k, val := range m.Spec.AddedNodeSelector {
			if have, ok := pod.Spec.NodeSelector[k]; ok && have != val {
				return nil, fmt.Errorf("addedNodeSelector %s=%s contradicts the VMI's nodeSelector %s=%s: it can only narrow placement", k, val, k, have)
			}
			pod.Spec.NodeSelector[k] = val
		}
	}
	if !InPlace(m, vmi) {
		avoidNode(&pod.Spec, vmi.Status.NodeName)
	}
	return pod, nil
}

// avoidNode adds "not on node" to every required node selector term (a term per
// alternative: each must exclude the node).
func avoidNode(spec *corev1.PodSpec, node string) {
	not := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchFields = append(req.NodeSelectorTerms[i].MatchFields, not)
	}
}

// targetTrouble says why the target Pod of a migration in phase (that the source node agent
// has not started) can no longer serve ("" when it can), and otherwise how long until a
// timeout must be checked (0: none pending).
func targetTrouble(pod *corev1.Pod, phase v1.VirtualMachineInstanceMigrationPhase, now time.Time) (string, time.Duration) {
	switch {
	case pod == nil:
		return "the target Pod no longer exists", 0
	case pod.DeletionTimestamp != nil:
		return "the target Pod " + pod.Name + " is being deleted", 0
	case launcherpodapi.Ended(pod):
		return "the target Pod " + pod.Name + " ended: " + launcherpodapi.EndMessage(pod), 0
	case phase != v1.MigrationScheduling || pod.Status.Phase == corev1.PodRunning:
		return "", 0
	}
	pending := pod.CreationTimestamp.Add(PendingTimeout)
	if !now.Before(pending) {
		return fmt.Sprintf("the target Pod %s is not running %s after its creation", pod.Name, PendingTimeout), 0
	}
	recheck := pending.Sub(now)
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
		unschedulable := c.LastTransitionTime.Add(UnschedulableTimeout)
		if !now.Before(unschedulable) {
			return fmt.Sprintf("the target Pod %s has been unschedulable for more than %s: %s", pod.Name, UnschedulableTimeout, c.Message), 0
		}
		recheck = min(recheck, unschedulable.Sub(now))
	}
	return "", recheck
}

// preparationTrouble says why a migration past Scheduled whose transfer has not started has
// waited too long ("" when it has not), and otherwise the earlier of recheck and its deadline.
func preparationTrouble(st v1.VirtualMachineInstanceMigrationStatus, now time.Time, recheck time.Duration) (string, time.Duration) {
	if st.Phase != v1.MigrationPreparingTarget && st.Phase != v1.MigrationTargetReady {
		return "", recheck
	}
	var since time.Time
	for _, t := range st.PhaseTransitionTimestamps {
		if t.Phase == v1.MigrationPreparingTarget {
			since = t.PhaseTransitionTimestamp.Time
		}
	}
	if since.IsZero() {
		return "", recheck
	}
	deadline := since.Add(PrepareTimeout)
	if !now.Before(deadline) {
		return fmt.Sprintf("the target was not ready, or the transfer did not start, within %s of PreparingTarget", PrepareTimeout), 0
	}
	if wait := deadline.Sub(now); recheck == 0 || wait < recheck {
		recheck = wait
	}
	return "", recheck
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
