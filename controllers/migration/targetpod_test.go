package migration

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

var opts = launcherpod.Options{Image: "launcher:dev"}

func runningVMI() *v1.VirtualMachineInstance {
	mem := resource.MustParse("64Mi")
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns", UID: "vmi-uid"},
		Spec:       v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Memory: &v1.Memory{Guest: &mem}}},
		Status:     v1.VirtualMachineInstanceStatus{Phase: v1.Running, NodeName: "node-a"},
	}
}

func migrationOf(selector map[string]string) *v1.VirtualMachineInstanceMigration {
	return &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "mig-uid"},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "vm1", AddedNodeSelector: selector}}
}

func TestTargetPod(t *testing.T) {
	vmi := runningVMI()
	source, err := launcherpod.Render(vmi, opts)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := TargetPod(migrationOf(map[string]string{"zone": "b"}), vmi, opts)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name == source.Name || pod.Name != launcherpodapi.PodName("vm1", "mig-uid") || pod.Labels[v1.MigrationJobLabel] != "mig-uid" {
		t.Errorf("target %s labels %v; source %s", pod.Name, pod.Labels, source.Name)
	}
	if pod.Labels[v1.CreatedByLabel] != "vmi-uid" || pod.Spec.NodeSelector["zone"] != "b" {
		t.Errorf("target labels %v node selector %v", pod.Labels, pod.Spec.NodeSelector)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Values[0] != "node-a" || terms[0].MatchFields[0].Operator != "NotIn" {
		t.Errorf("the target must avoid the source node: %+v", terms)
	}

	inPlace, err := TargetPod(migrationOf(map[string]string{hostnameLabel: "node-a"}), vmi, opts)
	if err != nil {
		t.Fatal(err)
	}
	if inPlace.Spec.Affinity != nil && inPlace.Spec.Affinity.NodeAffinity != nil {
		t.Errorf("an in-place target avoids its own node: %+v", inPlace.Spec.Affinity.NodeAffinity)
	}
	if inPlace.Spec.NodeSelector[hostnameLabel] != "node-a" {
		t.Errorf("an in-place target is not pinned to the node: %v", inPlace.Spec.NodeSelector)
	}

	vmi.Spec.NodeSelector = map[string]string{"zone": "a"}
	if _, err := TargetPod(migrationOf(map[string]string{"zone": "b"}), vmi, opts); err == nil {
		t.Error("an addedNodeSelector that widens placement was accepted")
	}
	vmi.Status.NodeName = ""
	if _, err := TargetPod(migrationOf(nil), vmi, opts); err == nil {
		t.Error("a target for a VMI on no node")
	}
}

// TestTargetPodImages: the target mounts the digest the source's kubelet reported for a tagged
// containerDisk; without a report the target is refused, saying why, unless the VMI names its
// image by digest.
func TestTargetPodImages(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	vmi := runningVMI()
	vmi.Spec.Volumes = []v1.Volume{{Name: "os", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "reg:5000/os:latest"}}}}
	if _, err := TargetPod(migrationOf(nil), vmi, opts); err == nil || !strings.Contains(err.Error(), "os: reg:5000/os:latest") || !strings.Contains(err.Error(), "by digest") {
		t.Errorf("target without the source's digest: %v, want a refusal naming the image and what to do", err)
	}
	pinned := opts
	pinned.PinnedImages = map[string]string{"os": "reg:5000/os@" + digest}
	pod, err := TargetPod(migrationOf(nil), vmi, pinned)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.Reference != "reg:5000/os@"+digest {
			t.Errorf("target image volume %+v, want the source's digest", v.Image)
		}
	}
	vmi.Spec.Volumes[0].ContainerDisk.Image = "reg:5000/os@" + digest
	if _, err := TargetPod(migrationOf(nil), vmi, opts); err != nil {
		t.Errorf("target of a VMI whose image is named by digest: %v", err)
	}
}
