package launcherpod

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
)

var testOpts = Options{Image: "ghcr.io/vireo-dev/vireo-launcher:dev"}

// newVMI is a minimal VMI with 64Mi of guest memory.
func newVMI(mutate ...func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "testvm", Namespace: "ns1", UID: "uid-1"},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
			Memory: &v1.Memory{Guest: new(resource.MustParse("64Mi"))},
		}},
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func render(t *testing.T, vmi *v1.VirtualMachineInstance, opts Options) *corev1.Pod {
	t.Helper()
	pod, err := Render(vmi, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return pod
}

func TestRenderMetadata(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Labels = map[string]string{"app": "web", v1.NodeNameLabel: "stale", v1.AppLabel: "spoofed"}
	})
	pod := render(t, vmi, testOpts)
	if pod.Name != launcherpodapi.PodName("testvm", "uid-1") || pod.GenerateName != "" || pod.Namespace != "ns1" {
		t.Errorf("name/generateName/namespace = %q %q %q", pod.Name, pod.GenerateName, pod.Namespace)
	}
	wantLabels := map[string]string{"app": "web", "kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "uid-1"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"kubevirt.io/domain": "testvm"}, pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	wantRef := []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance",
		Name: "testvm", UID: "uid-1", Controller: new(true), BlockOwnerDeletion: new(true)}}
	if diff := cmp.Diff(wantRef, pod.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	if vmi.Labels[v1.AppLabel] != "spoofed" {
		t.Errorf("Render changed the VMI's labels")
	}
}

func TestRenderVMLabel(t *testing.T) {
	vmRef := func(apiVersion, kind, name string, controller bool) func(*v1.VirtualMachineInstance) {
		return func(vmi *v1.VirtualMachineInstance) {
			vmi.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: "vm-uid", Controller: new(controller)}}
		}
	}
	tests := []struct {
		name   string
		mutate func(*v1.VirtualMachineInstance)
		want   string // "" means no label
	}{
		{name: "no owner", mutate: func(*v1.VirtualMachineInstance) {}},
		{name: "VM controller", mutate: vmRef("kubevirt.io/v1", "VirtualMachine", "myvm", true), want: "myvm"},
		{name: "VM owner, not controller", mutate: vmRef("kubevirt.io/v1", "VirtualMachine", "myvm", false)},
		{name: "other group's VirtualMachine", mutate: vmRef("example.com/v1", "VirtualMachine", "myvm", true)},
		{name: "other kind", mutate: vmRef("kubevirt.io/v1", "VirtualMachineInstanceReplicaSet", "rs", true)},
		{name: "name too long for a label", mutate: vmRef("kubevirt.io/v1", "VirtualMachine", strings.Repeat("a", 64), true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := render(t, newVMI(tt.mutate), testOpts)
			got, ok := pod.Labels[launcherpodapi.VirtualMachineNameLabel]
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("label %s = %q (present %v), want %q", launcherpodapi.VirtualMachineNameLabel, got, ok, tt.want)
			}
		})
	}
}

func TestRenderResources(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name       string
		opts       Options
		mutate     func(*v1.VirtualMachineInstance)
		wantReq    corev1.ResourceList
		wantLimits corev1.ResourceList
	}{{
		name:    "64Mi guest + default overhead, default cpu",
		opts:    testOpts,
		mutate:  func(*v1.VirtualMachineInstance) {},
		wantReq: corev1.ResourceList{"memory": q("224Mi"), "cpu": q("100m")},
	}, {
		name:    "explicit overhead",
		opts:    Options{Image: "img", MemoryOverhead: q("100Mi")},
		mutate:  func(*v1.VirtualMachineInstance) {},
		wantReq: corev1.ResourceList{"memory": q("164Mi"), "cpu": q("100m")},
	}, {
		name: "guest from memory request; other requests copied",
		opts: testOpts,
		mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Memory = nil
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"memory": q("1Gi"), "ephemeral-storage": q("1Gi")}
		},
		wantReq: corev1.ResourceList{"memory": q("1184Mi"), "cpu": q("100m"), "ephemeral-storage": q("1Gi")},
	}, {
		name: "guest from memory limit; limit plus overhead",
		opts: testOpts,
		mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Memory = nil
			vmi.Spec.Domain.Resources.Limits = v1.ResourceList{"memory": q("128Mi")}
		},
		wantReq:    corev1.ResourceList{"memory": q("288Mi"), "cpu": q("100m")},
		wantLimits: corev1.ResourceList{"memory": q("288Mi")},
	}, {
		name: "cpu from topology, 100m per vCPU (KubeVirt's allocation ratio 10)",
		opts: testOpts,
		mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.CPU = &v1.CPU{Cores: 2, Sockets: 3, Threads: 2}
		},
		wantReq: corev1.ResourceList{"memory": q("224Mi"), "cpu": q("1200m")},
	}, {
		name:    "partial topology counts unset parts as 1",
		opts:    testOpts,
		mutate:  func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Domain.CPU = &v1.CPU{Sockets: 2} },
		wantReq: corev1.ResourceList{"memory": q("224Mi"), "cpu": q("200m")},
	}, {
		name: "cpu request wins over topology; limits copied",
		opts: testOpts,
		mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.CPU = &v1.CPU{Sockets: 4}
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"cpu": q("500m")}
			vmi.Spec.Domain.Resources.Limits = v1.ResourceList{"cpu": q("1"), "memory": q("64Mi")}
		},
		wantReq:    corev1.ResourceList{"memory": q("224Mi"), "cpu": q("500m")},
		wantLimits: corev1.ResourceList{"memory": q("224Mi"), "cpu": q("1")},
	}, {
		name: "cpu limit alone is the request",
		opts: testOpts,
		mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Limits = v1.ResourceList{"cpu": q("2")}
		},
		wantReq:    corev1.ResourceList{"memory": q("224Mi"), "cpu": q("2")},
		wantLimits: corev1.ResourceList{"cpu": q("2")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newVMI(tt.mutate)
			before := vmi.DeepCopy()
			pod := render(t, vmi, tt.opts)
			res := pod.Spec.Containers[0].Resources
			if diff := cmp.Diff(tt.wantReq, res.Requests, quantityEqual); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLimits, res.Limits, quantityEqual); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, vmi, quantityEqual); diff != "" {
				t.Errorf("Render changed the VMI (-before +after):\n%s", diff)
			}
		})
	}
}

// quantityEqual compares quantities by value, not by representation.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestRenderGracePeriod(t *testing.T) {
	tests := []struct {
		name  string
		grace *int64
		want  int64
	}{
		{name: "default", grace: nil, want: v1.DefaultGracePeriodSeconds + 15},
		{name: "zero", grace: new(int64(0)), want: 15},
		{name: "explicit", grace: new(int64(120)), want: 135},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := render(t, newVMI(func(vmi *v1.VirtualMachineInstance) { vmi.Spec.TerminationGracePeriodSeconds = tt.grace }), testOpts)
			if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != tt.want {
				t.Errorf("terminationGracePeriodSeconds = %v, want %d", g, tt.want)
			}
		})
	}
}

func TestRenderScheduling(t *testing.T) {
	vmi := newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		vmi.Spec.PriorityClassName = "high"
		vmi.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
			}}},
		}}
		vmi.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "vms", Effect: "NoSchedule"},
			{Operator: v1.TolerationOpExists, Effect: "NoExecute", TolerationSeconds: new(int64(30))}}
	})
	pod := render(t, vmi, testOpts)
	for _, c := range []struct {
		name     string
		vmi, pod any
	}{
		{"nodeSelector", vmi.Spec.NodeSelector, pod.Spec.NodeSelector},
		{"affinity", vmi.Spec.Affinity, pod.Spec.Affinity},
		{"tolerations", vmi.Spec.Tolerations, pod.Spec.Tolerations},
	} {
		if want, got := mustJSON(t, c.vmi), mustJSON(t, c.pod); want != got {
			t.Errorf("%s: pod %s, want %s", c.name, got, want)
		}
	}
	if pod.Spec.PriorityClassName != "high" {
		t.Errorf("priorityClassName = %q", pod.Spec.PriorityClassName)
	}
	vmi.Spec.NodeSelector["disk"] = "changed"
	if pod.Spec.NodeSelector["disk"] != "ssd" {
		t.Errorf("the Pod's nodeSelector aliases the VMI's")
	}

	empty := render(t, newVMI(), testOpts)
	if empty.Spec.NodeSelector != nil || empty.Spec.Affinity != nil || empty.Spec.Tolerations != nil {
		t.Errorf("constraints on an unconstrained VMI: %v %v %v", empty.Spec.NodeSelector, empty.Spec.Affinity, empty.Spec.Tolerations)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
