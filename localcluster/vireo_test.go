package localcluster

import (
	"os"
	"slices"
	"strings"
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

// TestHAOverlayKeepsBaseAPIServerArgs: artifacts/local/ha replaces vireo-apiserver's argument
// list (kustomize merges lists whole) to point it at the host's vireo-etcd members; every other
// argument of artifacts/base must be there unchanged, so that a flag added to the base is not
// lost in HA mode.
func TestHAOverlayKeepsBaseAPIServerArgs(t *testing.T) {
	args := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := DecodeManifests(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if obj.GetKind() != "Deployment" || obj.GetName() != "vireo-apiserver" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				c := c.(map[string]any)
				if c["name"] == "vireo-apiserver" {
					list, _, _ := unstructured.NestedStringSlice(c, "args")
					return list
				}
			}
		}
		t.Fatalf("%s: no vireo-apiserver container", path)
		return nil
	}
	etcdServers := func(list []string) []string {
		var out []string
		for _, a := range list {
			if !strings.HasPrefix(a, "--etcd-servers=") {
				out = append(out, a)
			}
		}
		return out
	}
	base, ha := args("../artifacts/base/apiserver.yaml"), args("../artifacts/local/ha/apiserver.yaml")
	if !slices.Equal(etcdServers(base), etcdServers(ha)) {
		t.Errorf("artifacts/local/ha/apiserver.yaml's arguments, but for --etcd-servers, differ from artifacts/base's:\n ha:   %q\n base: %q", ha, base)
	}
	if !slices.Contains(ha, "--etcd-servers=ETCD_SERVERS") {
		t.Errorf("artifacts/local/ha/apiserver.yaml does not name ETCD_SERVERS: %q", ha)
	}
}
