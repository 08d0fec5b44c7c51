package simkubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// sync brings the Pod of key to what a kubelet would report: deleted once it is being deleted,
// else running.
func (k *Kubelet) sync(ctx context.Context, key string) error {
	obj, exists, err := k.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	pods := k.kube.CoreV1().Pods(pod.Namespace)
	if pod.DeletionTimestamp != nil {
		// The containers "stopped" at once: the kubelet's final delete.
		err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)),
			Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("finishing the deletion of Pod %s: %w", key, err)
		}
		return nil
	}
	if Running(pod) {
		return nil
	}
	updated := pod.DeepCopy()
	updated.Status = RunningStatus(pod, podAddress(int(k.started.Add(1))).String(), metav1.Now())
	_, err = pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("reporting Pod %s running: %w", key, err)
	}
	return nil
}

// Running reports whether pod's status already says it runs, ready.
func Running(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// RunningStatus is the status a kubelet reports for pod once every container started and is
// ready: init containers completed, phase Running, the Pod's address ip, its conditions True.
func RunningStatus(pod *corev1.Pod, ip string, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now,
		QOSClass: pod.Status.QOSClass}
	if len(pod.Status.HostIPs) > 0 {
		st.HostIP, st.HostIPs = pod.Status.HostIP, pod.Status.HostIPs
	}
	// The scheduler's PodScheduled stays as it wrote it, as a kubelet keeps it.
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			scheduled = c
		}
	}
	st.Conditions = append(st.Conditions, scheduled)
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image,
			Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image,
			Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	return st
}
