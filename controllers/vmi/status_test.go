package vmi

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

var t0 = metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))

// launcherPod is the VMI's launcher Pod in a state set by mutate.
func launcherPod(mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: launcherpodapi.PodName("vm", "uid-vm"), Namespace: "ns", UID: "pod-uid"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "launcher:v1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func running(p *corev1.Pod) {
	p.Spec.NodeName = "node-a"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
}

func failedAt(at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = "node-a"
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "compute", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 2, Reason: "Error", Message: "libvirtd did not start", FinishedAt: metav1.NewTime(at)}}}}
	}
}

// deletedBy is a running Pod whose deletion was asked for, to be gone by deadline.
func deletedBy(deadline time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		running(p)
		d := metav1.NewTime(deadline)
		p.DeletionTimestamp = &d
	}
}

// TestNodeUnresponsiveMessageNamesTheNode: the reason's message says which node and Pod.
func TestNodeUnresponsiveMessageNamesTheNode(t *testing.T) {
	st, _ := nextStatus(libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)), launcherPod(deletedBy(t0.Add(-time.Hour))), t0)
	msg := st.Conditions[len(st.Conditions)-1].Message
	if !strings.Contains(msg, "node node-a") || !strings.Contains(msg, launcherpodapi.PodName("vm", "uid-vm")) {
		t.Errorf("message %q, want the node and the Pod named", msg)
	}
}

// TestAbandonedPods: a Pod its node never stopped holds back the deletion of a VMI with shared
// storage only.
func TestAbandonedPods(t *testing.T) {
	failed := func(volumes ...v1.Volume) *v1.VirtualMachineInstance {
		vmi := libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Failed))
		vmi.Status.Reason = v1.ReasonNodeUnresponsive
		vmi.Spec.Volumes = volumes
		return vmi
	}
	containerDisk := v1.Volume{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "i"}}}
	claim := v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}}
	dv := v1.Volume{Name: "dv", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "dv"}}}
	deleting := launcherPod(deletedBy(t0.Time))
	cases := []struct {
		name string
		vmi  *v1.VirtualMachineInstance
		pod  *corev1.Pod
		want bool
	}{
		{"ephemeral disks only", failed(containerDisk), deleting, true},
		{"a claim", failed(containerDisk, claim), deleting, false},
		{"a DataVolume", failed(dv), deleting, false},
		{"an ephemeral claim (a source not made for the Pod alone)", failed(v1.Volume{Name: "e", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}), deleting, false},
		{"not being deleted", failed(containerDisk), launcherPod(running), false},
		{"failed for another reason", libvmi.New(libvmi.InPhase(v1.Failed)), deleting, false},
	}
	for _, c := range cases {
		if got := abandoned(c.vmi, c.pod); got != c.want {
			t.Errorf("%s: abandoned = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNextStatus(t *testing.T) {
	unschedulable := func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/2 nodes are available: 2 Insufficient memory."}}
	}
	cases := []struct {
		name        string
		vmi         *v1.VirtualMachineInstance
		pod         *corev1.Pod
		wantPhase   v1.VirtualMachineInstancePhase
		wantReason  string
		wantNode    string
		wantCond    string // "Type=Status/Reason" that must be present
		wantRecheck bool
	}{
		{name: "pending without pod stays", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Pending)), wantPhase: v1.Pending},
		{name: "pod created", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Pending)), pod: launcherPod(nil), wantPhase: v1.Scheduling, wantCond: "Ready=False/GuestNotRunning"},
		{name: "unset phase counts as pending", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase("")), pod: launcherPod(nil), wantPhase: v1.Scheduling},
		{name: "pod already running: straight to scheduled", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Pending)), pod: launcherPod(running), wantPhase: v1.Scheduled, wantNode: "node-a"},
		{name: "unschedulable", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), pod: launcherPod(unschedulable), wantPhase: v1.Scheduling, wantCond: "PodScheduled=False/Unschedulable"},
		{name: "running but the compute container not started waits", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), pod: launcherPod(func(p *corev1.Pod) {
			running(p)
			p.Status.Conditions[1].Status = corev1.ConditionFalse
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}), wantPhase: v1.Scheduling},
		// The compute container carries the VMI's readiness probe, which passes only once the
		// guest runs: the VMI is scheduled without waiting for it.
		{name: "compute container running but not ready: scheduled", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), pod: launcherPod(func(p *corev1.Pod) {
			running(p)
			p.Status.Conditions[1].Status = corev1.ConditionFalse
			p.Status.ContainerStatuses[0].Ready = false
		}), wantPhase: v1.Scheduled, wantNode: "node-a"},
		{name: "scheduled", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), pod: launcherPod(running), wantPhase: v1.Scheduled, wantNode: "node-a"},
		{name: "pod gone while scheduling", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), wantPhase: v1.Failed, wantReason: v1.ReasonPodNotExists},
		{name: "pod failed while scheduling", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), pod: launcherPod(failedAt(t0.Time)), wantPhase: v1.Failed, wantReason: v1.ReasonPodFailed},
		{name: "pod failed when scheduled", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduled)), pod: launcherPod(failedAt(t0.Time)), wantPhase: v1.Failed, wantReason: v1.ReasonPodFailed},
		{name: "pod gone while running", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)), wantPhase: v1.Failed, wantReason: v1.ReasonPodNotExists},
		{name: "running pod ended just now: node agent's turn", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)), pod: launcherPod(failedAt(t0.Time)), wantPhase: v1.Running, wantRecheck: true},
		{name: "running pod ended long ago", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)), pod: launcherPod(failedAt(t0.Add(-time.Minute))), wantPhase: v1.Failed, wantReason: v1.ReasonLauncherExited},
		{name: "running pod being deleted: its node has until the deletion timestamp", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)),
			pod: launcherPod(deletedBy(t0.Add(10 * time.Second))), wantPhase: v1.Running, wantRecheck: true},
		{name: "running pod being deleted, its node silent past the deadline: node unresponsive", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)),
			pod: launcherPod(deletedBy(t0.Add(-OrphanedRunningGrace - time.Second))), wantPhase: v1.Failed, wantReason: v1.ReasonNodeUnresponsive},
		{name: "running with pod: node agent's", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Running)), pod: launcherPod(running), wantPhase: v1.Running},
		{name: "final stays", vmi: libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Succeeded)), wantPhase: v1.Succeeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.vmi.DeepCopy()
			st, recheck := nextStatus(c.vmi, c.pod, t0)
			if st.Phase != c.wantPhase || st.Reason != c.wantReason {
				t.Errorf("phase/reason = %s/%q, want %s/%q", st.Phase, st.Reason, c.wantPhase, c.wantReason)
			}
			if st.NodeName != c.wantNode {
				t.Errorf("nodeName = %q, want %q", st.NodeName, c.wantNode)
			}
			if (recheck > 0) != c.wantRecheck {
				t.Errorf("recheck = %v, want one: %v", recheck, c.wantRecheck)
			}
			if c.wantCond != "" && !hasCondition(st, c.wantCond) {
				t.Errorf("conditions %+v lack %s", st.Conditions, c.wantCond)
			}
			if st.Phase != before.Status.Phase {
				last := st.PhaseTransitionTimestamps[len(st.PhaseTransitionTimestamps)-1]
				if last.Phase != st.Phase || !last.PhaseTransitionTimestamp.Equal(&t0) {
					t.Errorf("last phase transition %+v, want %s at %v", last, st.Phase, t0)
				}
			}
			if c.vmi.Status.Phase != before.Status.Phase || len(c.vmi.Status.Conditions) != len(before.Status.Conditions) {
				t.Error("nextStatus modified its input")
			}
		})
	}
}

func hasCondition(st v1.VirtualMachineInstanceStatus, want string) bool {
	for _, c := range st.Conditions {
		if string(c.Type)+"="+string(c.Status)+"/"+c.Reason == want {
			return true
		}
	}
	return false
}

func TestScheduledRecordsPodAndImage(t *testing.T) {
	st, _ := nextStatus(libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), launcherPod(running), t0)
	if st.ActivePods[types.UID("pod-uid")] != "node-a" || len(st.ActivePods) != 1 {
		t.Errorf("activePods = %v", st.ActivePods)
	}
	if st.LauncherContainerImageVersion != "launcher:v1" {
		t.Errorf("launcherContainerImageVersion = %q", st.LauncherContainerImageVersion)
	}
	failed, _ := nextStatus(libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling)), launcherPod(failedAt(t0.Time)), t0)
	if msg := failed.Conditions[0].Message; !strings.Contains(msg, "libvirtd did not start") || !strings.Contains(msg, "code 2") {
		t.Errorf("failure message %q does not say how the launcher ended", msg)
	}
}

func TestScheduledRecordsImageDigests(t *testing.T) {
	const digest = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"
	vmi := libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Scheduling))
	vmi.Spec.Volumes = []v1.Volume{
		{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "registry:5000/disk:latest"}}},
		{Name: "data", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("1Mi")}}},
	}
	vmi.Spec.Domain.Firmware = &v1.Firmware{KernelBoot: &v1.KernelBoot{Container: &v1.KernelBootContainer{Image: "registry:5000/kernel@" + digest}}}
	pod := launcherPod(func(p *corev1.Pod) {
		running(p)
		p.Spec.Volumes = []corev1.Volume{
			{Name: launcherpodapi.ContainerDiskVolumeName("root"), VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "registry:5000/disk@" + digest}}},
			{Name: launcherpodapi.KernelBootVolumeName, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "registry:5000/kernel@" + digest}}},
		}
	})
	st, _ := nextStatus(vmi, pod, t0)
	if len(st.VolumeStatus) != 1 || st.VolumeStatus[0].Name != "root" || st.VolumeStatus[0].ContainerDiskVolume == nil ||
		st.VolumeStatus[0].ContainerDiskVolume.ImageID != "registry:5000/disk@"+digest {
		t.Errorf("volumeStatus = %+v, want root at registry:5000/disk@%s only", st.VolumeStatus, digest)
	}
	if st.KernelBootStatus == nil || st.KernelBootStatus.ImageID != "registry:5000/kernel@"+digest {
		t.Errorf("kernelBootStatus = %+v", st.KernelBootStatus)
	}
}

func TestSyncCreatesOneLauncherPodAndWritesScheduling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	vmi := libvmi.New(libvmi.WithUID("uid-vm"), libvmi.InPhase(v1.Pending))
	vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"memory": resource.MustParse("64Mi")}
	vireo := vireofake.NewClientset(vmi)
	ctrl := startController(ctx, t, vireo)
	if err := ctrl.sync(ctx, "ns/vm"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	statusWrites := 0
	for _, a := range vireo.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			statusWrites++
		}
	}
	if statusWrites != 1 {
		t.Errorf("status writes = %d, want 1", statusWrites)
	}
	// A second sync from a stale cache (VMI still Pending, no Pod seen) finds the Pod it made.
	if err := ctrl.sync(ctx, "ns/vm"); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	pods, err := ctrl.kube.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods = %d (%v), want 1", len(pods.Items), err)
	}
	if pods.Items[0].Name != launcherpodapi.PodName("vm", "uid-vm") {
		t.Errorf("pod name = %q", pods.Items[0].Name)
	}
	got, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "vm", metav1.GetOptions{})
	if err != nil || got.Status.Phase != v1.Scheduling {
		t.Fatalf("phase = %v (%v), want Scheduling", got.Status.Phase, err)
	}
}

func TestHardwareStatus(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
		Machine: &v1.Machine{Type: "q35"},
		CPU:     &v1.CPU{Cores: 2},
		Memory:  &v1.Memory{Guest: new(resource.MustParse("128Mi"))},
	}}}
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: launcherpodapi.ContainerName, Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("288Mi")}}}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable},
	}
	var st v1.VirtualMachineInstanceStatus
	hardwareStatus(&st, vmi, pod)
	if st.QOSClass == nil || *st.QOSClass != "Burstable" || st.Machine == nil || st.Machine.Type != "q35" {
		t.Errorf("qosClass %v, machine %+v; want Burstable, q35", st.QOSClass, st.Machine)
	}
	if c := st.CurrentCPUTopology; c == nil || *c != (v1.CPUTopology{Cores: 2, Sockets: 1, Threads: 1}) {
		t.Errorf("currentCPUTopology %+v, want 2 cores, 1 socket, 1 thread", c)
	}
	m := st.Memory
	if m == nil || m.GuestAtBoot.String() != "128Mi" || m.GuestCurrent.String() != "128Mi" || m.GuestRequested.String() != "128Mi" ||
		m.MemoryOverhead == nil || m.MemoryOverhead.String() != "160Mi" {
		t.Errorf("memory %+v, want 128Mi at boot, now and requested, 160Mi overhead", m)
	}
}
