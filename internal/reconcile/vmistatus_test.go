package reconcile

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
)

// TestWriteVMIStatusSaysWhetherItWrote: an unchanged status and a VMI deleted meanwhile are not
// written (and not errors); a changed one is written and recorded.
func TestWriteVMIStatusSaysWhetherItWrote(t *testing.T) {
	ctx := context.Background()
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", ResourceVersion: "7"},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Scheduled}}
	var written WrittenVersions
	client := fake.NewSimpleClientset(vmi.DeepCopy())
	if wrote, err := WriteVMIStatus(ctx, client, &written, vmi, vmi.Status); wrote || err != nil {
		t.Fatalf("unchanged status: wrote %v, err %v; want not written", wrote, err)
	}
	changed := v1.VirtualMachineInstanceStatus{Phase: v1.Running}
	if wrote, err := WriteVMIStatus(ctx, client, &written, vmi, changed); !wrote || err != nil {
		t.Fatalf("changed status: wrote %v, err %v; want written", wrote, err)
	}
	if !written.Stale("ns/vm", "7") {
		t.Error("the write was not recorded")
	}
	gone := vmi.DeepCopy()
	gone.Name = "gone"
	if wrote, err := WriteVMIStatus(ctx, client, &written, gone, changed); wrote || err != nil {
		t.Fatalf("deleted VMI: wrote %v, err %v; want not written and no error", wrote, err)
	}
}
