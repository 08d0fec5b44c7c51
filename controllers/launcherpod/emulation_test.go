package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/kvm"
)

func TestRenderPassesTheEmulationSetting(t *testing.T) {
	base := []string{"--namespace", "ns1", "--name", "testvm", "--uid", "uid-1"}
	cases := []struct {
		name    string
		setting *clusterconfig.EmulationSetting
		want    []string
		// kvm: the container requests and is limited to one devices.kubevirt.io/kvm.
		kvm bool
	}{
		{"no setting: the launcher's default", nil, base, false},
		{"allowed", &clusterconfig.EmulationSetting{Allowed: true, Source: "KubeVirt vireo-system/kubevirt"},
			append(base[:len(base):len(base)], "--use-emulation=true", "--use-emulation-source=KubeVirt vireo-system/kubevirt"), false},
		{"not allowed", &clusterconfig.EmulationSetting{Source: "KubeVirt's defaults"},
			append(base[:len(base):len(base)], "--use-emulation=false", "--use-emulation-source=KubeVirt's defaults"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := testOpts
			if c.setting != nil {
				s := *c.setting
				opts.Emulation = func() clusterconfig.EmulationSetting { return s }
			}
			pod := render(t, newVMI(), opts)
			if diff := cmp.Diff(c.want, pod.Spec.Containers[0].Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			res := pod.Spec.Containers[0].Resources
			for what, list := range map[string]corev1.ResourceList{"requests": res.Requests, "limits": res.Limits} {
				q, has := list[kvm.ResourceName]
				if has != c.kvm || (has && q.Value() != 1) {
					t.Errorf("%s[%s] = %v (present %t), want present %t with 1", what, kvm.ResourceName, q.String(), has, c.kvm)
				}
			}
		})
	}
}

// TestRenderReadsTheSettingPerPod checks a changed setting reaches the next Pod without new
// Options: the controller keeps the Options it was built with.
func TestRenderReadsTheSettingPerPod(t *testing.T) {
	allowed := false
	opts := testOpts
	opts.Emulation = func() clusterconfig.EmulationSetting {
		return clusterconfig.EmulationSetting{Allowed: allowed, Source: "KubeVirt vireo-system/kubevirt"}
	}
	first := render(t, newVMI(), opts).Spec.Containers[0].Args
	allowed = true
	second := render(t, newVMI(), opts).Spec.Containers[0].Args
	if first[6] != "--use-emulation=false" || second[6] != "--use-emulation=true" {
		t.Errorf("args of two Pods around a change: %q then %q", first[6:], second[6:])
	}
}
