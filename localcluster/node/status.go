package node

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Exit is one observed termination of a container's process.
type Exit struct {
	// ExitCode is the process's exit code; for a process killed by a signal it may be 0, and the
	// status then reports 128+Signal as runtimes do.
	ExitCode int32
	// Signal is the signal that killed the process, 0 when it exited.
	Signal int32
	// OOMKilled is true when the kernel killed the process for its memory limit.
	OOMKilled bool
	// Message is a human-readable note (the tail of the log, or why it was killed).
	Message string
	// StartedAt and FinishedAt bound the run.
	StartedAt, FinishedAt time.Time
	// ContainerID names the run that ended.
	ContainerID string
}

// ContainerObservation is what the node knows of one container. Its state is Running when Running
// is set, else Terminated when Exit is set, else Waiting.
type ContainerObservation struct {
	// Name is the container's name in the Pod spec.
	Name string
	// ContainerID names the current run (vireo-local://...), empty before the first start.
	ContainerID string
	// ImageID identifies the binary that runs the image.
	ImageID string
	// Running is true while the process is alive.
	Running bool
	// StartedAt is when the running process started.
	StartedAt time.Time
	// Exit is the current termination of a container that will not be restarted; a container
	// waiting to restart has its exit in LastExit instead.
	Exit *Exit
	// WaitingReason and WaitingMessage explain a waiting container (ErrImagePull,
	// ImagePullBackOff, CrashLoopBackOff, CreateContainerConfigError, ...). Empty means
	// ContainerCreating, or PodInitializing while init containers run.
	WaitingReason, WaitingMessage string
	// LastExit is the termination before the current run or wait.
	LastExit *Exit
	// RestartCount counts the restarts.
	RestartCount int32
	// Ready is the readiness probe's verdict (true without a probe); it counts only while running.
	Ready bool
	// Started is the startup probe's verdict (true without a probe); it counts only while running.
	Started bool
}

// PodObservation is what the node knows of one Pod.
type PodObservation struct {
	// Now stamps changed conditions.
	Now time.Time
	// SandboxReady is true once the Pod's network namespace and volumes are set up.
	SandboxReady bool
	// PodIPs and HostIPs are the Pod's and the node's addresses, primary first.
	PodIPs, HostIPs []string
	// StartTime is when the node accepted the Pod; an existing status.startTime is kept.
	StartTime time.Time
	// InitContainers and Containers are the observed containers; a container of the spec with no
	// observation has not been created yet.
	InitContainers, Containers []ContainerObservation
}

// PodStatus is the status a kubelet would report for pod given what the node observed. It starts
// from a copy of pod.Status, so fields the node does not own (qosClass, PodScheduled, other
// conditions) survive, and a phase that is already terminal never changes.
func PodStatus(pod *corev1.Pod, obs PodObservation) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	initialized := initDone(pod.Spec.InitContainers, obs.InitContainers)
	st.InitContainerStatuses = containerStatuses(pod.Spec.InitContainers, obs.InitContainers, ReasonPodInitializing, true)
	defaultReason := ReasonContainerCreating
	if !initialized {
		defaultReason = ReasonPodInitializing
	}
	st.ContainerStatuses = containerStatuses(pod.Spec.Containers, obs.Containers, defaultReason, false)
	if st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed {
		st.Phase = podPhase(pod.Spec, st.InitContainerStatuses, st.ContainerStatuses)
	}
	if len(obs.PodIPs) > 0 {
		st.PodIP, st.PodIPs = obs.PodIPs[0], nil
		for _, ip := range obs.PodIPs {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
	}
	if len(obs.HostIPs) > 0 {
		st.HostIP, st.HostIPs = obs.HostIPs[0], nil
		for _, ip := range obs.HostIPs {
			st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
		}
	}
	if st.StartTime == nil && !obs.StartTime.IsZero() {
		t := metav1.NewTime(obs.StartTime)
		st.StartTime = &t
	}
	st.ObservedGeneration = pod.Generation
	setConditions(&st, pod, obs, initialized)
	return st
}

// initDone reports whether every init container has exited 0.
func initDone(specs []corev1.Container, obs []ContainerObservation) bool {
	for _, c := range specs {
		o := find(obs, c.Name)
		if o == nil || o.Running || o.Exit == nil || o.Exit.ExitCode != 0 || o.Exit.Signal != 0 {
			return false
		}
	}
	return true
}

func find(obs []ContainerObservation, name string) *ContainerObservation {
	for i := range obs {
		if obs[i].Name == name {
			return &obs[i]
		}
	}
	return nil
}

// containerStatuses builds the statuses in spec order; unobserved containers wait with
// defaultReason. Init containers are ready once they exited 0.
func containerStatuses(specs []corev1.Container, obs []ContainerObservation, defaultReason string, init bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for _, c := range specs {
		o := find(obs, c.Name)
		if o == nil {
			o = &ContainerObservation{Name: c.Name}
		}
		s := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: o.ImageID, ContainerID: o.ContainerID,
			RestartCount: o.RestartCount, State: containerState(o, defaultReason),
		}
		if o.LastExit != nil {
			s.LastTerminationState = corev1.ContainerState{Terminated: terminated(o.LastExit)}
		}
		started := o.Running && o.Started
		s.Started = &started
		s.Ready = o.Running && o.Ready
		if init {
			s.Ready = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
		}
		out = append(out, s)
	}
	return out
}

func containerState(o *ContainerObservation, defaultReason string) corev1.ContainerState {
	switch {
	case o.Running:
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(o.StartedAt)}}
	case o.Exit != nil:
		return corev1.ContainerState{Terminated: terminated(o.Exit)}
	}
	reason := o.WaitingReason
	if reason == "" {
		reason = defaultReason
	}
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: o.WaitingMessage}}
}

// terminated reports an exit as a kubelet does: reason OOMKilled, Completed or Error, and the
// exit code 128+signal for a process a signal killed.
func terminated(e *Exit) *corev1.ContainerStateTerminated {
	code := e.ExitCode
	if code == 0 && e.Signal != 0 {
		code = 128 + e.Signal
	}
	reason := ReasonError
	switch {
	case e.OOMKilled:
		reason = ReasonOOMKilled
	case code == 0:
		reason = ReasonCompleted
	}
	return &corev1.ContainerStateTerminated{
		ExitCode: code, Signal: e.Signal, Reason: reason, Message: e.Message,
		StartedAt: metav1.NewTime(e.StartedAt), FinishedAt: metav1.NewTime(e.FinishedAt), ContainerID: e.ContainerID,
	}
}

// podPhase is the kubelet's phase rule: Pending until every container has been created and the
// init containers are done, Running while one runs (or will be restarted), Succeeded when all
// exited 0 and none restarts, Failed when one failed and none restarts.
func podPhase(spec corev1.PodSpec, initStatuses, statuses []corev1.ContainerStatus) corev1.PodPhase {
	pendingInit, failedInit := 0, 0
	for _, s := range initStatuses {
		switch {
		case s.State.Terminated != nil:
			if s.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil && s.LastTerminationState.Terminated.ExitCode != 0:
			failedInit++
		default:
			pendingInit++
		}
	}
	if failedInit > 0 && spec.RestartPolicy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	if pendingInit > 0 || failedInit > 0 {
		return corev1.PodPending
	}
	running, waiting, stopped, succeeded := 0, 0, 0, 0
	for _, s := range statuses {
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.LastTerminationState.Terminated != nil:
			stopped++ // waiting to restart after an exit
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0 || len(statuses) == 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case spec.RestartPolicy == corev1.RestartPolicyAlways || spec.RestartPolicy == "":
		return corev1.PodRunning
	case stopped == succeeded:
		return corev1.PodSucceeded
	case spec.RestartPolicy == corev1.RestartPolicyNever:
		return corev1.PodFailed
	default: // OnFailure with a failed container: it restarts
		return corev1.PodRunning
	}
}

// setConditions updates the four conditions the node owns, keeping the others.
func setConditions(st *corev1.PodStatus, pod *corev1.Pod, obs PodObservation, initialized bool) {
	gen := pod.Generation
	set := func(t corev1.PodConditionType, ok bool, reason, message string) {
		setCondition(st, corev1.PodCondition{Type: t, Status: boolStatus(ok), Reason: reason, Message: message, ObservedGeneration: gen}, obs.Now)
	}
	set(corev1.PodReadyToStartContainers, obs.SandboxReady, "", "")
	if initialized {
		set(corev1.PodInitialized, true, "", "")
	} else {
		set(corev1.PodInitialized, false, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(notReady(st.InitContainerStatuses), " ")))
	}
	unready := notReady(st.ContainerStatuses)
	reason, message := "", ""
	switch {
	case st.Phase == corev1.PodSucceeded:
		reason = "PodCompleted"
	case len(unready) > 0:
		reason, message = "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	}
	containersReady := reason == ""
	set(corev1.ContainersReady, containersReady, reason, message)
	if containersReady {
		reason, message = readinessGates(pod, st.Conditions)
	}
	set(corev1.PodReady, reason == "", reason, message)
}

// notReady names the containers that are not ready.
func notReady(statuses []corev1.ContainerStatus) []string {
	var names []string
	for _, s := range statuses {
		if !s.Ready {
			names = append(names, s.Name)
		}
	}
	return names
}

// readinessGates checks the Pod's readiness gates against its conditions; the reason is empty
// when all are True.
func readinessGates(pod *corev1.Pod, conds []corev1.PodCondition) (reason, message string) {
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := condition(conds, g.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %s", g.ConditionType, c.Status))
		}
	}
	if len(msgs) == 0 {
		return "", ""
	}
	return "ReadinessGatesNotReady", strings.Join(msgs, ", ")
}

func condition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition replaces or appends c, keeping lastTransitionTime when the status is unchanged.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	if old := condition(st.Conditions, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		c.LastProbeTime = old.LastProbeTime
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

func boolStatus(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}
