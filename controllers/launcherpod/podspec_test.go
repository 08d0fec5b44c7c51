package launcherpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

func TestRenderPodSpec(t *testing.T) {
	pod := render(t, newVMI(), testOpts)
	spec := pod.Spec
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %q", spec.RestartPolicy)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken = %v, want false: the launcher holds no credentials", spec.AutomountServiceAccountToken)
	}
	if spec.ServiceAccountName != "" {
		t.Errorf("serviceAccountName = %q", spec.ServiceAccountName)
	}
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Errorf("enableServiceLinks = %v, want false", spec.EnableServiceLinks)
	}
	wantSC := &corev1.PodSecurityContext{RunAsUser: new(int64(107)), RunAsGroup: new(int64(107)), RunAsNonRoot: new(true), FSGroup: new(int64(107)),
		Sysctls:        []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "67"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if diff := cmp.Diff(wantSC, spec.SecurityContext); diff != "" {
		t.Errorf("pod securityContext (-want +got):\n%s", diff)
	}
	wantVolumes := []corev1.Volume{
		// No hostPath: the Pod passes Pod Security baseline.
		{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "private", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if diff := cmp.Diff(wantVolumes, spec.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("containers = %d, init containers = %d, want 1 and 0", len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	if c.Name != "compute" || c.Image != testOpts.Image || len(c.Command) != 0 {
		t.Errorf("container name %q image %q command %q", c.Name, c.Image, c.Command)
	}
	if diff := cmp.Diff([]string{"--namespace", "ns1", "--name", "testvm", "--uid", "uid-1"}, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext %+v: want a read-only root and no privilege escalation", sc)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			t.Errorf("env %s is not a fieldRef: %+v", e.Name, e)
			continue
		}
		env[e.Name] = e.ValueFrom.FieldRef.FieldPath
	}
	wantEnv := map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid", "POD_IP": "status.podIP",
		"NODE_NAME": "spec.nodeName"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantMounts := []corev1.VolumeMount{{Name: "run", MountPath: "/var/run/vireo/launcher"}, {Name: "private", MountPath: protocol.PrivateDir}}
	if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
		t.Errorf("volume mounts (-want +got):\n%s", diff)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext %+v must forbid privilege escalation", sc)
	}
}

func TestRenderHostname(t *testing.T) {
	pod := render(t, newVMI(func(vmi *v1.VirtualMachineInstance) {
		vmi.Spec.Hostname, vmi.Spec.Subdomain = "guest", "svc"
	}), testOpts)
	if pod.Spec.Hostname != "guest" || pod.Spec.Subdomain != "svc" {
		t.Errorf("hostname %q subdomain %q", pod.Spec.Hostname, pod.Spec.Subdomain)
	}
}

func TestRenderErrors(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name   string
		opts   Options
		mutate func(*v1.VirtualMachineInstance)
		want   string // a field path the error must name
	}{
		{name: "no memory at all", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Domain.Memory = nil },
			want: "spec.domain.memory.guest"},
		{name: "zero guest memory", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Domain.Memory.Guest = new(q("0")) },
			want: "spec.domain.memory.guest"},
		{name: "negative memory request", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Memory = nil
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"memory": q("-1Mi")}
		}, want: "spec.domain.resources.requests[memory]"},
		{name: "negative cpu request", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"cpu": q("-1")}
		}, want: "spec.domain.resources.requests[cpu]"},
		{name: "memory limit below guest", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Limits = v1.ResourceList{"memory": q("32Mi")}
		}, want: "spec.domain.resources.limits.memory"},
		{name: "cpu limit below request", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.Domain.Resources.Requests = v1.ResourceList{"cpu": q("2")}
			vmi.Spec.Domain.Resources.Limits = v1.ResourceList{"cpu": q("1")}
		}, want: "spec.domain.resources.limits.cpu"},
		{name: "negative grace", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) {
			vmi.Spec.TerminationGracePeriodSeconds = new(int64(-1))
		}, want: "spec.terminationGracePeriodSeconds"},
		{name: "no uid", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) { vmi.UID = "" }, want: "metadata.uid"},
		{name: "no name", opts: testOpts, mutate: func(vmi *v1.VirtualMachineInstance) { vmi.Name = "" }, want: "metadata.name"},
		{name: "no image", opts: Options{}, mutate: func(*v1.VirtualMachineInstance) {}, want: "options.image"},
		{name: "negative overhead", opts: Options{Image: "img", MemoryOverhead: q("-1Mi")},
			mutate: func(*v1.VirtualMachineInstance) {}, want: "options.memoryOverhead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := Render(newVMI(tt.mutate), tt.opts)
			if err == nil {
				t.Fatalf("Render succeeded: %+v", pod)
			}
			if pod != nil {
				t.Errorf("Render returned a Pod with its error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %s", err, tt.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
	if _, err := Render(nil, testOpts); err == nil {
		t.Errorf("Render(nil) succeeded")
	}
}
