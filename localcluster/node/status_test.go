package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

func running(name string, ready bool) ContainerObservation {
	return ContainerObservation{Name: name, Running: true, StartedAt: t0, Ready: ready, Started: true}
}

func exited(name string, code int32) ContainerObservation {
	return ContainerObservation{Name: name, Exit: &Exit{ExitCode: code, StartedAt: t0, FinishedAt: t1}}
}

func crashLooping(name string, code int32) ContainerObservation {
	return ContainerObservation{Name: name, WaitingReason: ReasonCrashLoopBackOff, RestartCount: 3,
		LastExit: &Exit{ExitCode: code, StartedAt: t0, FinishedAt: t1}}
}

func waiting(name, reason string) ContainerObservation {
	return ContainerObservation{Name: name, WaitingReason: reason}
}

func statusPod(policy corev1.RestartPolicy, inits, ctrs []string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 2}}
	pod.Spec.RestartPolicy = policy
	for _, n := range inits {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: n, Image: "img-" + n})
	}
	for _, n := range ctrs {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: "img-" + n})
	}
	return pod
}

func TestPodPhase(t *testing.T) {
	A, N, F := corev1.RestartPolicyAlways, corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure
	cases := []struct {
		name   string
		policy corev1.RestartPolicy
		inits  []ContainerObservation
		ctrs   []ContainerObservation
		want   corev1.PodPhase
	}{
		{name: "nothing observed", policy: A, want: corev1.PodPending},
		{name: "image pull error", policy: A, ctrs: []ContainerObservation{waiting("a", ReasonErrImagePull)}, want: corev1.PodPending},
		{name: "config error", policy: N, ctrs: []ContainerObservation{waiting("a", ReasonCreateContainerConfigError)}, want: corev1.PodPending},
		{name: "running", policy: A, ctrs: []ContainerObservation{running("a", true), running("b", false)}, want: corev1.PodRunning},
		{name: "one running one creating", policy: A, ctrs: []ContainerObservation{running("a", true)}, want: corev1.PodPending},
		{name: "crash loop keeps Running", policy: A, ctrs: []ContainerObservation{crashLooping("a", 1), running("b", true)}, want: corev1.PodRunning},
		{name: "only crash looping", policy: A, ctrs: []ContainerObservation{crashLooping("a", 1), crashLooping("b", 2)}, want: corev1.PodRunning},
		{name: "Always all exited 0", policy: A, ctrs: []ContainerObservation{exited("a", 0), exited("b", 0)}, want: corev1.PodRunning},
		{name: "Never all exited 0", policy: N, ctrs: []ContainerObservation{exited("a", 0), exited("b", 0)}, want: corev1.PodSucceeded},
		{name: "Never one failed", policy: N, ctrs: []ContainerObservation{exited("a", 0), exited("b", 2)}, want: corev1.PodFailed},
		{name: "Never one still running", policy: N, ctrs: []ContainerObservation{exited("a", 1), running("b", true)}, want: corev1.PodRunning},
		{name: "OnFailure all exited 0", policy: F, ctrs: []ContainerObservation{exited("a", 0), exited("b", 0)}, want: corev1.PodSucceeded},
		{name: "OnFailure restarting", policy: F, ctrs: []ContainerObservation{exited("a", 0), crashLooping("b", 1)}, want: corev1.PodRunning},
		{name: "init running", policy: A, inits: []ContainerObservation{running("i1", false)}, want: corev1.PodPending},
		{name: "init not started", policy: A, want: corev1.PodPending},
		{name: "init failed Never", policy: N, inits: []ContainerObservation{exited("i1", 1)}, want: corev1.PodFailed},
		{name: "init failed OnFailure restarts", policy: F, inits: []ContainerObservation{crashLooping("i1", 1)}, want: corev1.PodPending},
		{name: "init failed Always restarts", policy: A, inits: []ContainerObservation{crashLooping("i1", 1)}, want: corev1.PodPending},
		{name: "init done then running", policy: A, inits: []ContainerObservation{exited("i1", 0)},
			ctrs: []ContainerObservation{running("a", true), running("b", true)}, want: corev1.PodRunning},
	}
	for _, c := range cases {
		inits, ctrs := names(c.inits), names(c.ctrs)
		if c.name == "init not started" {
			inits = []string{"i1"}
		}
		if len(ctrs) == 0 || c.name == "one running one creating" {
			ctrs = []string{"a", "b"}
		}
		pod := statusPod(c.policy, inits, ctrs)
		st := PodStatus(pod, PodObservation{Now: t2, InitContainers: c.inits, Containers: c.ctrs})
		if st.Phase != c.want {
			t.Errorf("%s: phase %s, want %s", c.name, st.Phase, c.want)
		}
	}
}

func names(obs []ContainerObservation) []string {
	var out []string
	for _, o := range obs {
		out = append(out, o.Name)
	}
	return out
}

func TestPodStatusTerminalPhaseSticks(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyNever, nil, []string{"a"})
	pod.Status.Phase = corev1.PodFailed
	st := PodStatus(pod, PodObservation{Now: t2, Containers: []ContainerObservation{running("a", true)}})
	if st.Phase != corev1.PodFailed {
		t.Errorf("phase %s; a terminal phase must not change", st.Phase)
	}
}

func TestContainerStatuses(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyAlways, []string{"i1"}, []string{"run", "loop", "oom", "sig", "pull", "new"})
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	obs := PodObservation{Now: t2,
		InitContainers: []ContainerObservation{exited("i1", 0)},
		Containers: []ContainerObservation{
			{Name: "run", ContainerID: "vireo-local://x", Running: true, StartedAt: t1, Ready: true, Started: true, RestartCount: 1,
				LastExit: &Exit{ExitCode: 0, StartedAt: t0, FinishedAt: t1}},
			crashLooping("loop", 1),
			{Name: "oom", Exit: &Exit{ExitCode: 137, Signal: 9, OOMKilled: true, StartedAt: t0, FinishedAt: t1}},
			{Name: "sig", Exit: &Exit{Signal: 15, StartedAt: t0, FinishedAt: t1}},
			{Name: "pull", WaitingReason: ReasonImagePullBackOff, WaitingMessage: "Back-off pulling image"},
		},
	}
	st := PodStatus(pod, obs)
	get := func(name string) corev1.ContainerStatus {
		for _, s := range st.ContainerStatuses {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no status for %s", name)
		return corev1.ContainerStatus{}
	}
	if len(st.ContainerStatuses) != 6 || st.ContainerStatuses[0].Name != "run" || st.ContainerStatuses[5].Name != "new" {
		t.Fatalf("statuses not in spec order: %+v", st.ContainerStatuses)
	}
	run := get("run")
	if run.State.Running == nil || !run.State.Running.StartedAt.Time.Equal(t1) || !run.Ready || !*run.Started ||
		run.RestartCount != 1 || run.Image != "img-run" || run.ContainerID != "vireo-local://x" ||
		run.LastTerminationState.Terminated == nil || run.LastTerminationState.Terminated.Reason != ReasonCompleted {
		t.Errorf("run: %+v", run)
	}
	loop := get("loop")
	if loop.State.Waiting == nil || loop.State.Waiting.Reason != ReasonCrashLoopBackOff || loop.Ready || *loop.Started ||
		loop.RestartCount != 3 || loop.LastTerminationState.Terminated.Reason != ReasonError ||
		loop.LastTerminationState.Terminated.ExitCode != 1 || !loop.LastTerminationState.Terminated.FinishedAt.Time.Equal(t1) {
		t.Errorf("loop: %+v", loop)
	}
	if oom := get("oom").State.Terminated; oom == nil || oom.Reason != ReasonOOMKilled || oom.ExitCode != 137 || oom.Signal != 9 {
		t.Errorf("oom: %+v", oom)
	}
	if sig := get("sig").State.Terminated; sig == nil || sig.Reason != ReasonError || sig.ExitCode != 143 || sig.Signal != 15 ||
		!sig.StartedAt.Time.Equal(t0) || !sig.FinishedAt.Time.Equal(t1) {
		t.Errorf("sig: %+v", sig)
	}
	if pull := get("pull").State.Waiting; pull == nil || pull.Reason != ReasonImagePullBackOff || pull.Message != "Back-off pulling image" {
		t.Errorf("pull: %+v", pull)
	}
	if w := get("new").State.Waiting; w == nil || w.Reason != ReasonContainerCreating {
		t.Errorf("new: %+v", w)
	}
	if i := st.InitContainerStatuses; len(i) != 1 || !i[0].Ready || i[0].State.Terminated.Reason != ReasonCompleted {
		t.Errorf("init: %+v", i)
	}
}

func TestContainersWaitForInit(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyAlways, []string{"i1", "i2"}, []string{"a"})
	st := PodStatus(pod, PodObservation{Now: t2, InitContainers: []ContainerObservation{exited("i1", 0)}})
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
		t.Errorf("container waits with %+v, want PodInitializing", w)
	}
	if w := st.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
		t.Errorf("i2 waits with %+v, want PodInitializing", w)
	}
	c := condition(st.Conditions, corev1.PodInitialized)
	if c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" || c.Message != "containers with incomplete status: [i2]" {
		t.Errorf("Initialized: %+v", c)
	}
}

func TestPodStatusKeepsAPIFields(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyAlways, nil, []string{"a"})
	start := metav1.NewTime(t0)
	pod.Status = corev1.PodStatus{
		QOSClass:  corev1.PodQOSBestEffort,
		StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
		},
	}
	st := PodStatus(pod, PodObservation{Now: t2, StartTime: t1, SandboxReady: true,
		PodIPs: []string{"10.244.0.5", "fd00::5"}, HostIPs: []string{"10.0.0.2"},
		Containers: []ContainerObservation{running("a", true)}})
	if st.QOSClass != corev1.PodQOSBestEffort || !st.StartTime.Time.Equal(t0) {
		t.Errorf("qosClass %q startTime %v; both must survive", st.QOSClass, st.StartTime)
	}
	if st.PodIP != "10.244.0.5" || len(st.PodIPs) != 2 || st.PodIPs[1].IP != "fd00::5" || st.HostIP != "10.0.0.2" || st.HostIPs[0].IP != "10.0.0.2" {
		t.Errorf("addresses: %s %v %s %v", st.PodIP, st.PodIPs, st.HostIP, st.HostIPs)
	}
	if st.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d, want 2", st.ObservedGeneration)
	}
	if pod.Status.Phase != "" || len(pod.Status.Conditions) != 1 {
		t.Error("PodStatus modified the Pod it was given")
	}
	want := []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady}
	if len(st.Conditions) != len(want) {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	for i, c := range st.Conditions {
		if c.Type != want[i] || c.Status != corev1.ConditionTrue {
			t.Errorf("condition %d = %s %s, want %s True", i, c.Type, c.Status, want[i])
		}
	}
	if !st.Conditions[0].LastTransitionTime.Time.Equal(t0) {
		t.Error("PodScheduled lost its lastTransitionTime")
	}
}

func TestConditionTransitions(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyAlways, nil, []string{"a", "b"})
	// t1: sandbox ready, a ready, b not.
	obs := PodObservation{Now: t1, SandboxReady: true, Containers: []ContainerObservation{running("a", true), running("b", false)}}
	pod.Status = PodStatus(pod, obs)
	ready := condition(pod.Status.Conditions, corev1.PodReady)
	if ready.Status != corev1.ConditionFalse || ready.Reason != "ContainersNotReady" || ready.Message != "containers with unready status: [b]" {
		t.Errorf("Ready at t1: %+v", ready)
	}
	// t2: b becomes ready; Ready changes, PodReadyToStartContainers does not.
	obs.Now, obs.Containers[1].Ready = t2, true
	st := PodStatus(pod, obs)
	if c := condition(st.Conditions, corev1.PodReady); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t2) || c.Reason != "" {
		t.Errorf("Ready at t2: %+v", c)
	}
	if c := condition(st.Conditions, corev1.PodReadyToStartContainers); !c.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("PodReadyToStartContainers moved to %v though unchanged", c.LastTransitionTime)
	}
}

func TestReadinessGates(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyAlways, nil, []string{"a"})
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	obs := PodObservation{Now: t1, SandboxReady: true, Containers: []ContainerObservation{running("a", true)}}
	st := PodStatus(pod, obs)
	if c := condition(st.Conditions, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
		t.Errorf("Ready without the gate's condition: %+v", c)
	}
	if c := condition(st.Conditions, corev1.ContainersReady); c.Status != corev1.ConditionTrue {
		t.Errorf("ContainersReady: %+v", c)
	}
	pod.Status = st
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "example.com/lb", Status: corev1.ConditionTrue})
	if c := condition(PodStatus(pod, obs).Conditions, corev1.PodReady); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready with the gate True: %+v", c)
	}
}

func TestSucceededPodConditions(t *testing.T) {
	pod := statusPod(corev1.RestartPolicyNever, nil, []string{"a"})
	st := PodStatus(pod, PodObservation{Now: t2, SandboxReady: true, Containers: []ContainerObservation{exited("a", 0)}})
	for _, typ := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		if c := condition(st.Conditions, typ); c.Status != corev1.ConditionFalse || c.Reason != "PodCompleted" {
			t.Errorf("%s: %+v, want False PodCompleted", typ, c)
		}
	}
}
