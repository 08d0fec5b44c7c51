package node

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type fakeLookup struct {
	secrets    map[string]map[string][]byte
	configMaps map[string]map[string]string
	err        error
}

func (f fakeLookup) Secret(ns, name string) (map[string][]byte, bool, error) {
	d, ok := f.secrets[ns+"/"+name]
	return d, ok, f.err
}

func (f fakeLookup) ConfigMap(ns, name string) (map[string]string, bool, error) {
	d, ok := f.configMaps[ns+"/"+name]
	return d, ok, f.err
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "B": "b$(A)", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	cases := map[string]string{
		"":                "",
		"plain":           "plain",
		"$(A)":            "a",
		"x$(A)y$(A)":      "xaya",
		"$(B)":            "b$(A)", // values are not expanded twice
		"$(EMPTY)-":       "-",
		"$(MISSING)":      "$(MISSING)",
		"$$(A)":           "$(A)",
		"$$$(A)":          "$a",
		"$$":              "$",
		"$":               "$",
		"a$":              "a$",
		"$A":              "$A",
		"$(A":             "$(A",
		"$(A$(A)":         "$(A$(A)",
		"$()":             "$()",
		"$(A)$(A":         "a$(A",
		"100$ and $(A)$$": "100$ and a$",
	}
	for in, want := range cases {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "ns", UID: "u-1",
			Labels:      map[string]string{"app": "web", "a.b/c": "x"},
			Annotations: map[string]string{"note": "hi"},
		},
		Spec: corev1.PodSpec{NodeName: "node-0", ServiceAccountName: "sa"},
	}
}

func field(p string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: p}}
}

func TestFieldValue(t *testing.T) {
	pod := testPod()
	ips, hosts := []string{"10.0.0.5", "fd00::5"}, []string{"192.168.1.2"}
	cases := map[string]string{
		"metadata.name":                "web-0",
		"metadata.namespace":           "ns",
		"metadata.uid":                 "u-1",
		"metadata.labels['app']":       "web",
		"metadata.labels['a.b/c']":     "x",
		"metadata.labels['none']":      "",
		"metadata.annotations['note']": "hi",
		"spec.nodeName":                "node-0",
		"spec.serviceAccountName":      "sa",
		"status.podIP":                 "10.0.0.5",
		"status.podIPs":                "10.0.0.5,fd00::5",
		"status.hostIP":                "192.168.1.2",
		"status.hostIPs":               "192.168.1.2",
		"metadata.labels":              "ERR",
		"metadata.labels['app'":        "ERR",
		"spec.containers[0].name":      "ERR",
	}
	for p, want := range cases {
		got, err := FieldValue(pod, &corev1.ObjectFieldSelector{FieldPath: p}, ips, hosts)
		if want == "ERR" {
			if err == nil || !strings.Contains(err.Error(), "supported") {
				t.Errorf("FieldValue(%s) = %q, %v; want an error", p, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("FieldValue(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := FieldValue(pod, &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}, nil, nil); err == nil {
		t.Error("apiVersion v2 accepted")
	}
}

func TestResourceFieldRef(t *testing.T) {
	pod := testPod()
	c := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("100M")},
	}}
	pod.Spec.Containers = []corev1.Container{c, {Name: "side"}}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	cases := []struct {
		res, divisor, container, want string
	}{
		{res: "limits.cpu", want: "2"},
		{res: "limits.cpu", divisor: "1m", want: "1500"},
		{res: "requests.cpu", want: "1"},
		{res: "requests.cpu", divisor: "100m", want: "3"},
		{res: "limits.memory", want: "1073741824"},
		{res: "limits.memory", divisor: "1Mi", want: "1024"},
		{res: "requests.memory", divisor: "1Mi", want: "96"},
		{res: "limits.ephemeral-storage", divisor: "1Gi", want: "10"},
		{res: "requests.ephemeral-storage", want: "0"},
		{res: "limits.cpu", container: "side", want: "4"},
		{res: "limits.memory", container: "side", divisor: "1Gi", want: "8"},
		{res: "limits.cpu", container: "ghost", want: "ERR"},
		{res: "limits.hugepages-2Mi", want: "ERR"},
		{res: "usage.cpu", want: "ERR"},
	}
	for _, tc := range cases {
		sel := &corev1.ResourceFieldSelector{Resource: tc.res, ContainerName: tc.container}
		if tc.divisor != "" {
			sel.Divisor = resource.MustParse(tc.divisor)
		}
		got, err := resourceValue(EnvInput{Pod: pod, Container: &c, NodeAllocatable: alloc}, sel)
		if tc.want == "ERR" {
			if err == nil {
				t.Errorf("%s/%s = %q; want an error", tc.container, tc.res, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s/%s divisor %s = %q, %v; want %s", tc.container, tc.res, tc.divisor, got, err, tc.want)
		}
	}
}

func ptrTrue() *bool { b := true; return &b }

func TestContainerEnv(t *testing.T) {
	lookup := fakeLookup{
		secrets:    map[string]map[string][]byte{"ns/db": {"password": []byte("s3cret"), "user": []byte("root")}},
		configMaps: map[string]map[string]string{"ns/cfg": {"MODE": "fast", "LEVEL": "3", "bad=key": "x", "1X": "y"}},
	}
	service := KubernetesServiceEnv("10.96.0.1", 443)
	cases := []struct {
		name        string
		env         []corev1.EnvVar
		envFrom     []corev1.EnvFromSource
		base        []string
		want        []string // the container's own variables, in order, before service variables
		wantSkipped []string
		wantErr     string
	}{{
		name: "values and expansion see earlier and service variables only",
		env: []corev1.EnvVar{
			{Name: "A", Value: "1"},
			{Name: "B", Value: "$(A)-$(C)-$(KUBERNETES_SERVICE_HOST)-$$(A)"},
			{Name: "C", Value: "3"},
			{Name: "E"},
		},
		want: []string{"A=1", "B=1-$(C)-10.96.0.1-$(A)", "C=3", "E="},
	}, {
		name: "fieldRef, secretKeyRef and configMapKeyRef",
		env: []corev1.EnvVar{
			{Name: "POD", ValueFrom: field("metadata.name")},
			{Name: "IP", ValueFrom: field("status.podIP")},
			{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
			{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "MODE"}}},
			{Name: "REF", Value: "$(POD)@$(IP)"},
		},
		want: []string{"POD=web-0", "IP=10.0.0.5", "PW=s3cret", "MODE=fast", "REF=web-0@10.0.0.5"},
	}, {
		name: "optional missing sources leave the variable out",
		env: []corev1.EnvVar{
			{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k", Optional: ptrTrue()}}},
			{Name: "Y", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "nokey", Optional: ptrTrue()}}},
			{Name: "Z", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "nokey", Optional: ptrTrue()}}},
		},
		envFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: ptrTrue()}}},
		want: nil,
	}, {
		name: "envFrom first with prefix, env overrides, invalid names skipped",
		envFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
			{Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
		},
		env: []corev1.EnvVar{
			{Name: "MODE", Value: "slow-$(LEVEL)"},
			{Name: "user", Value: "admin"},
		},
		want:        []string{"1X=y", "LEVEL=3", "MODE=slow-3", "DB_password=s3cret", "DB_user=root", "password=s3cret", "user=admin"},
		wantSkipped: []string{"bad=key"},
	}, {
		name: "base variables are overridden and not visible to expansion",
		base: []string{"PATH=/usr/bin", "HOSTNAME=web-0", "KUBERNETES_SERVICE_PORT=1"},
		env: []corev1.EnvVar{
			{Name: "PATH", Value: "/opt:$(PATH)"},
			{Name: "H", Value: "$(HOSTNAME)"},
		},
		want: []string{"HOSTNAME=web-0", "PATH=/opt:$(PATH)", "H=$(HOSTNAME)"},
	}, {
		name:    "missing mandatory secret",
		env:     []corev1.EnvVar{{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Key: "password"}}}},
		wantErr: "secret ns/gone not found",
	}, {
		name:    "missing mandatory key",
		env:     []corev1.EnvVar{{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "token"}}}},
		wantErr: `key "token" not found in secret ns/db`,
	}, {
		name:    "missing mandatory configMap key",
		env:     []corev1.EnvVar{{Name: "M", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "K"}}}},
		wantErr: `key "K" not found in ConfigMap ns/cfg`,
	}, {
		name:    "missing mandatory envFrom",
		envFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}}}},
		wantErr: "ConfigMap ns/gone not found",
	}, {
		name:    "unsupported fieldRef",
		env:     []corev1.EnvVar{{Name: "F", ValueFrom: field("spec.hostname")}},
		wantErr: `fieldRef "spec.hostname"`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			c := &corev1.Container{Name: "app", Env: tc.env, EnvFrom: tc.envFrom}
			got, skipped, err := ContainerEnv(EnvInput{Pod: pod, Container: c, PodIPs: []string{"10.0.0.5"},
				HostIPs: []string{"192.168.1.2"}, Lookup: lookup, Service: service, Base: tc.base})
			if tc.wantErr != "" {
				var ce *ContainerError
				if !errors.As(err, &ce) || ce.Reason != ReasonCreateContainerConfigError || !strings.Contains(ce.Message, tc.wantErr) {
					t.Fatalf("err = %v; want CreateContainerConfigError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			own := got[:len(got)-countService(got, service)]
			if !reflect.DeepEqual(own, tc.want) && len(own)+len(tc.want) > 0 {
				t.Errorf("env = %q\nwant %q", own, tc.want)
			}
			if !reflect.DeepEqual(skipped, tc.wantSkipped) {
				t.Errorf("skipped = %q, want %q", skipped, tc.wantSkipped)
			}
			if !contains(got, "KUBERNETES_SERVICE_HOST=10.96.0.1") || !contains(got, "KUBERNETES_SERVICE_PORT=443") {
				t.Errorf("service variables missing from %q", got)
			}
		})
	}
}

// countService counts the trailing service variables of env.
func countService(env []string, service map[string]string) int {
	n := 0
	for i := len(env) - 1; i >= 0; i-- {
		name, _, _ := strings.Cut(env[i], "=")
		if _, ok := service[name]; !ok {
			break
		}
		n++
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestContainerEnvOverridesServiceVariable(t *testing.T) {
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "api.example"}}}
	got, _, err := ContainerEnv(EnvInput{Pod: testPod(), Container: c, Service: KubernetesServiceEnv("10.96.0.1", 443)})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "KUBERNETES_SERVICE_HOST=api.example" || contains(got, "KUBERNETES_SERVICE_HOST=10.96.0.1") {
		t.Errorf("env = %q; the container's own KUBERNETES_SERVICE_HOST must win, once", got)
	}
}

func TestContainerEnvLookupError(t *testing.T) {
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "k", Optional: ptrTrue()}}}}}
	_, _, err := ContainerEnv(EnvInput{Pod: testPod(), Container: c, Lookup: fakeLookup{err: errors.New("forbidden")}})
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("err = %v; an optional reference must still fail when the lookup itself fails", err)
	}
}

func TestKubernetesServiceEnv(t *testing.T) {
	got := KubernetesServiceEnv("fd00::1", 6443)
	want := map[string]string{
		"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443", "KUBERNETES_SERVICE_PORT_HTTPS": "6443",
		"KUBERNETES_PORT": "tcp://[fd00::1]:6443", "KUBERNETES_PORT_6443_TCP": "tcp://[fd00::1]:6443",
		"KUBERNETES_PORT_6443_TCP_PROTO": "tcp", "KUBERNETES_PORT_6443_TCP_PORT": "6443", "KUBERNETES_PORT_6443_TCP_ADDR": "fd00::1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
