package localcluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestServedByVireo: objects of Vireo's own kinds wait for its APIServices; the rest of the
// manifests (which run vireo-apiserver) do not.
func TestServedByVireo(t *testing.T) {
	cases := []struct {
		apiVersion, kind string
		want             bool
	}{
		{"kubevirt.io/v1", "KubeVirt", true},
		{"cdi.kubevirt.io/v1beta1", "DataVolume", true},
		{"apps/v1", "Deployment", false},
		{"apiregistration.k8s.io/v1", "APIService", false},
		{"v1", "Namespace", false},
	}
	for _, c := range cases {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(c.apiVersion)
		obj.SetKind(c.kind)
		if got := servedByVireo(obj); got != c.want {
			t.Errorf("%s %s: served by Vireo %v, want %v", c.apiVersion, c.kind, got, c.want)
		}
	}
}
