package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

// podFloorLabel marks the bare Pods of the Pod floor.
const podFloorLabel = "vmibench.vireo.dev/pod-floor"

// The Pod floor is what any Pod costs on these nodes before a launcher can do anything: n
// Pods created at once with nothing but the pause image (already cached: it is every
// sandbox's), no service account token, no probes; first with no volume at all, then with one
// emptyDir. Creation -> phase Running as a watch sees it is the kubelet's and containerd's
// part of a VMI's start (sandbox, CNI, runc, status update), which no launcher Pod can beat.
// The second shows what any volume costs: the kubelet checks a Pod's volumes are mounted
// every 300 ms (its volume manager's podAttachAndMountRetryInterval), and a launcher Pod has
// volumes.

// podFloorResult is the Pod floor of one run size.
type podFloorResult struct {
	Pods int `json:"pods"`
	// CreateToRunning is of the Pods without volumes, OneVolume of those with one emptyDir.
	CreateToRunning durations      `json:"creationToRunning"`
	OneVolume       durations      `json:"oneEmptyDirCreationToRunning"`
	PerNode         map[string]int `json:"podsPerNode"`
}

// podFloors measures the Pod floor of n Pods without a volume, then with one.
func (e *env) podFloors(ctx context.Context, n int) (podFloorResult, error) {
	res, err := e.podFloor(ctx, n, fmt.Sprintf("bare-%d", n), false)
	if err != nil {
		return res, err
	}
	vol, err := e.podFloor(ctx, n, fmt.Sprintf("emptydir-%d", n), true)
	res.OneVolume = vol.CreateToRunning
	return res, err
}

// podFloor creates n bare Pods at once (with one emptyDir volume if withVolume), waits until
// each runs, deletes them and waits until they are gone.
func (e *env) podFloor(ctx context.Context, n int, prefix string, withVolume bool) (res podFloorResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.c.startTimeout)
	defer cancel()
	pods := e.cl.kube.CoreV1().Pods(benchNS)
	selector := metav1.ListOptions{LabelSelector: podFloorLabel + "=" + prefix}
	list, err := pods.List(ctx, selector)
	if err != nil {
		return res, err
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: selector.LabelSelector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return res, err
	}
	defer w.Stop()
	defer func() { err = errors.Join(err, deleteBarePods(context.WithoutCancel(ctx), e, selector)) }()
	say("%s: creating %d bare Pod(s) at once", prefix, n)
	created, err := createBarePods(ctx, e, n, prefix, withVolume)
	if err != nil {
		return res, err
	}
	running, perNode, err := waitBarePodsRunning(ctx, w, created)
	if err != nil {
		return res, err
	}
	var ds []time.Duration
	for name, at := range running {
		ds = append(ds, at.Sub(created[name]))
	}
	return podFloorResult{Pods: n, CreateToRunning: summarize(ds), PerNode: perNode}, nil
}

// createBarePods creates the Pods concurrently, as the VMIs of a run are, and returns when
// each create was sent.
func createBarePods(ctx context.Context, e *env, n int, prefix string, withVolume bool) (map[string]time.Time, error) {
	created := make(map[string]time.Time, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		pod := barePod(fmt.Sprintf("%s-pod-%d", prefix, i), prefix, e.cluster.RegistryAddress())
		if withVolume {
			pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		}
		created[pod.Name] = time.Now()
		wg.Go(func() {
			_, errs[i] = e.cl.kube.CoreV1().Pods(benchNS).Create(ctx, pod, metav1.CreateOptions{})
		})
	}
	wg.Wait()
	return created, errors.Join(errs...)
}

// barePod is a Pod that only holds its sandbox: the pause image once more as its container.
func barePod(name, prefix, registry string) *corev1.Pod {
	no, zero := false, int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{podFloorLabel: prefix}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: &zero,
			EnableServiceLinks:            &no,
			SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(65532)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "pause", Image: registry + "/vireo/pause:latest", ImagePullPolicy: corev1.PullIfNotPresent,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
}

// waitBarePodsRunning returns when the watch saw each Pod's phase Running and where it ran.
func waitBarePodsRunning(ctx context.Context, w watch.Interface, created map[string]time.Time) (map[string]time.Time, map[string]int, error) {
	running, perNode := map[string]time.Time{}, map[string]int{}
	for len(running) < len(created) {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%d of %d bare Pods running: %w", len(running), len(created), ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil, errors.New("the watch of the bare Pods ended")
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			if _, seen := running[pod.Name]; !seen && pod.Status.Phase == corev1.PodRunning {
				running[pod.Name] = time.Now()
				perNode[pod.Spec.NodeName]++
			}
			if pod.Status.Phase == corev1.PodFailed {
				return nil, nil, fmt.Errorf("bare Pod %s failed: %s", pod.Name, pod.Status.Message)
			}
		}
	}
	return running, perNode, nil
}

// deleteBarePods deletes the Pod floor's Pods and waits until they are gone, so that the next
// run starts on quiet nodes.
func deleteBarePods(ctx context.Context, e *env, selector metav1.ListOptions) error {
	pods := e.cl.kube.CoreV1().Pods(benchNS)
	zero := int64(0)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, selector); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, selector)
		return err == nil && len(list.Items) == 0, nil
	})
}
