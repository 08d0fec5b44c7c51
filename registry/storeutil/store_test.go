package storeutil

import (
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/storage"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestIndexersIndexTheIndexedFields(t *testing.T) {
	res := Resource[*v1.VirtualMachineInstance]{
		SelectableFields: v1.VirtualMachineInstanceFields,
		IndexedFields:    []string{"status.nodeName"},
	}
	idx := indexers(res)
	if idx == nil || len(*idx) != 1 {
		t.Fatalf("indexers = %v, want one for status.nodeName", idx)
	}
	index, ok := (*idx)[storage.FieldIndex("status.nodeName")]
	if !ok {
		t.Fatalf("no indexer named %q: %v", storage.FieldIndex("status.nodeName"), *idx)
	}
	vmi := &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{NodeName: "node-a"}}
	if got, err := index(vmi); err != nil || !slices.Equal(got, []string{"node-a"}) {
		t.Errorf("index(vmi on node-a) = %v, %v; want [node-a]", got, err)
	}
	if _, err := index(&v1.VirtualMachine{}); err == nil {
		t.Errorf("indexing an object of another kind did not fail")
	}
	if indexers(Resource[*v1.VirtualMachineInstance]{SelectableFields: v1.VirtualMachineInstanceFields}) != nil {
		t.Errorf("a resource without indexed fields got indexers")
	}

	trig := triggers(res)
	trigger, ok := trig["status.nodeName"]
	if len(trig) != 1 || !ok {
		t.Fatalf("triggers = %v, want one for status.nodeName (watches are routed by it)", trig)
	}
	if got := trigger(vmi); got != "node-a" {
		t.Errorf("trigger(vmi on node-a) = %q, want node-a", got)
	}
}
