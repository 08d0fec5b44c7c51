package localcluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDescribesKindsOf(t *testing.T) {
	kubevirt := schema.GroupVersion{Group: "kubevirt.io", Version: "v1"}
	cases := []struct {
		name string
		doc  string
		want bool
	}{
		{"a kind of the group version", `{"components":{"schemas":{"io.kubevirt.v1.VirtualMachineInstance":{"x-kubernetes-group-version-kind":[{"group":"kubevirt.io","kind":"VirtualMachineInstance","version":"v1"}]}}}}`, true},
		{"only meta types (a document aggregated before Vireo's)", `{"components":{"schemas":{"io.k8s.apimachinery.pkg.apis.meta.v1.Status":{"x-kubernetes-group-version-kind":[{"group":"","kind":"Status","version":"v1"}]}}}}`, false},
		{"another version of the group", `{"components":{"schemas":{"x":{"x-kubernetes-group-version-kind":[{"group":"kubevirt.io","kind":"VirtualMachineInstance","version":"v1alpha3"}]}}}}`, false},
		{"no schemas", `{"openapi":"3.0.0"}`, false},
		{"not JSON", `<html>`, false},
	}
	for _, c := range cases {
		if got := describesKindsOf([]byte(c.doc), kubevirt); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
