package datavolume

import (
	"context"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/importer/importerapi"
	"github.com/vireo-dev/vireo/importer/uploadapi"
)

// A clone from another namespace: see uploadapi. vireo-apiserver has checked that the user may
// read the source (create on datavolumes/source there).
const (
	CloneTargetAnnotation = uploadapi.CloneTargetAnnotation
	CloneTargetUIDLabel   = uploadapi.CloneTargetUIDLabel
)

// crossNamespace is the namespace dv clones from when it is not dv's own, or "".
func crossNamespace(dv *cdiv1beta1.DataVolume) string {
	if src := dv.Spec.Source; src != nil && src.PVC != nil && src.PVC.Namespace != "" && src.PVC.Namespace != dv.Namespace {
		return src.PVC.Namespace
	}
	return ""
}

// SourcePodName is the name of dv's source Pod in the source namespace.
func SourcePodName(dv *cdiv1beta1.DataVolume) string {
	return uploadapi.CloneSourcePodName(string(dv.UID))
}

// SourcePod renders the Pod that sends dv's source claim to target, dv's importer Pod, which
// must have been scheduled: the source Pod runs on the same node and sends to the socket in its
// own emptyDir, which the node agent relays to target's.
func SourcePod(dv *cdiv1beta1.DataVolume, target *corev1.Pod, o ImporterOptions) *corev1.Pod {
	labels := map[string]string{ManagedByLabel: ManagedBy, "app": ImporterApp, CloneTargetUIDLabel: string(dv.UID),
		v1.AppLabel: v1.CloneSourceApp}
	meta := metav1.ObjectMeta{Name: SourcePodName(dv), Namespace: crossNamespace(dv), Labels: labels,
		Annotations: map[string]string{CloneTargetAnnotation: dv.Namespace + "/" + dv.Name}}
	pod := importerShell(meta, []string{"send", "--path=" + path.Join(sourceDir, importerapi.DiskName),
		"--upload-socket=" + path.Join(uploadDir, uploadapi.SocketName)}, o)
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{target.Spec.NodeName}}}}}}}}
	addSourceClaim(&pod.Spec, dv.Spec.Source.PVC.Name)
	addRunDir(&pod.Spec)
	return pod
}

// observeSource creates dv's source Pod once the target importer Pod runs, and returns what
// keeps the clone from going on: the source Pod's permanent failure (failed) or why it cannot
// run yet (problem).
func (c *Controller) observeSource(ctx context.Context, dv *cdiv1beta1.DataVolume, target *corev1.Pod) (failed, problem string, err error) {
	ns := crossNamespace(dv)
	if ns == "" || target == nil || target.Spec.NodeName == "" || target.Status.Phase != corev1.PodRunning {
		return "", "", nil
	}
	pod, err := c.pods.Pods(ns).Get(SourcePodName(dv))
	if apierrors.IsNotFound(err) {
		pod, err = c.kube.CoreV1().Pods(ns).Create(ctx, SourcePod(dv, target, c.opts), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return "", "", nil // the cache will show it
		}
	}
	if err != nil {
		return "", "", err
	}
	if pod.Labels[CloneTargetUIDLabel] != string(dv.UID) {
		return "", fmt.Sprintf("Pod %s/%s already exists and is not this DataVolume's clone source", ns, pod.Name), nil
	}
	var cs *corev1.ContainerStatus
	if len(pod.Status.ContainerStatuses) > 0 {
		cs = &pod.Status.ContainerStatuses[0]
	}
	if t := permanentFailure(cs); t != nil {
		return "the clone's source: " + lastLine(t.Message), "", nil
	}
	if pod.Status.Phase == corev1.PodPending {
		if msg := podMessage(pod); msg != "" {
			return "", fmt.Sprintf("the clone's source Pod %s/%s waits: %s", ns, pod.Name, msg), nil
		}
	}
	return "", "", nil
}

// deleteSourcePods deletes the source Pods sending to the DataVolume key (namespace/name),
// except the one of UID keep: the clone ended, or its DataVolume is gone or was replaced.
func (c *Controller) deleteSourcePods(ctx context.Context, key string, keep types.UID) error {
	pods, err := c.pods.List(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}))
	if err != nil {
		return err
	}
	for _, pod := range pods {
		if pod.Annotations[CloneTargetAnnotation] != key || (keep != "" && pod.Labels[CloneTargetUIDLabel] == string(keep)) {
			continue
		}
		err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		klog.FromContext(ctx).Info("Deleted a clone's source Pod", "pod", klog.KObj(pod), "dataVolume", key)
	}
	return nil
}
