package node

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEtcHosts(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns"},
		Spec: corev1.PodSpec{HostAliases: []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo", "bar"}}}}}
	got := string(etcHosts(pod, "10.244.0.5"))
	for _, want := range []string{"127.0.0.1\tlocalhost\n", "10.244.0.5\tweb-0\n", "10.1.2.3\tfoo\tbar\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts file lacks %q:\n%s", want, got)
		}
	}
	pod.Spec.Hostname, pod.Spec.Subdomain = "web", "svc"
	if got := string(etcHosts(pod, "10.244.0.5")); !strings.Contains(got, "10.244.0.5\tweb.svc.ns.svc.cluster.local\tweb-0\n") {
		t.Errorf("hosts file with a subdomain:\n%s", got)
	}
}
