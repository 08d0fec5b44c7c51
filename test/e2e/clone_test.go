package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/controllers/datavolume"
)

// TestDataVolumeCloneAcrossNamespaces: a user may clone a claim of another namespace only when
// allowed to read it there (create on datavolumes/source, CDI's rule); the clone boots and
// the source Pod in the source namespace is gone afterwards. Both namespaces enforce Pod
// Security baseline: the import, the clone's source Pod and its target upload Pod have no
// hostPath (the node agent relays between their emptyDirs), nor has the VMI's launcher.
func TestDataVolumeCloneAcrossNamespaces(t *testing.T) {
	t.Parallel()
	src, dst := baselineNamespace(t), baselineNamespace(t)
	kubectl(t, "-n", src, "apply", "-f", manifestFile(t, dataVolumeWith("golden",
		"    registry:\n      url: docker://"+cluster.ContainerDiskImage("tiny")+"\n", "64Mi")))
	bind(t, dst, "cloner", "kubevirt.io:edit")
	bind(t, src, "cloner", "kubevirt.io:view")
	cloner := userClient(t, "cloner").CdiV1beta1().DataVolumes(dst)
	clone := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "copy"}, Spec: cdiv1beta1.DataVolumeSpec{
		Source:  &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: src, Name: "golden"}},
		Storage: &cdiv1beta1.StorageSpec{},
	}}
	eventually(t, "a viewer of the source namespace is refused", func() error {
		_, err := cloner.Create(t.Context(), clone, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("may not clone claims of namespace %q", src)) {
			return fmt.Errorf("create: %v", err)
		}
		return nil
	})
	bind(t, src, "cloner", "kubevirt.io:edit")
	eventually(t, "an editor of the source namespace clones", func() error {
		_, err := cloner.Create(t.Context(), clone, metav1.CreateOptions{})
		return err
	})
	waitDataVolume(t, src, "golden", cdiv1beta1.Succeeded, 3*time.Minute)
	dv := waitDataVolume(t, dst, "copy", cdiv1beta1.Succeeded, 3*time.Minute)
	importerGone(t, dst, "copy")
	eventually(t, "the clone's source Pod is deleted", func() error {
		pods, err := kube.CoreV1().Pods(src).List(t.Context(), metav1.ListOptions{
			LabelSelector: labels.Set{datavolume.CloneTargetUIDLabel: string(dv.UID)}.String()})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("source Pods %d: %v", len(pods.Items), err)
		}
		return nil
	})
	applyExample(t, dst, "vmi-pvc.yaml", func(m string) string {
		m = strings.SplitN(m, "\n---\n", 2)[1]
		m = strings.Replace(m, "metadata:\n  name: pvc", "metadata:\n  name: cloned", 1)
		return strings.Replace(m, "persistentVolumeClaim:\n        claimName: tiny-disk", "dataVolume:\n        name: copy", 1)
	})
	openConsole(t, dst, "cloned").waitFor(t, guestMarker, 120*time.Second)
}
