package integration

import (
	"context"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster"
)

// TestExamplesAreAcceptedAndDefaulted creates every manifest of artifacts/examples the
// way `vireo-local up --apply` does and checks Vireo's defaults on the results.
func TestExamplesAreAcceptedAndDefaulted(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	files, err := filepath.Glob("../../artifacts/examples/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v (err %v), want at least 4", files, err)
	}
	applier, err := localcluster.NewApplier(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := applier.CreateFile(ctx, f, ns); err != nil {
			t.Fatalf("%s rejected: %v", f, err)
		}
	}
	kv := server.Client.KubevirtV1()
	vmi, err := kv.VirtualMachineInstances(ns).Get(ctx, "testvmi", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get example vmi: %v", err)
	}
	disks := vmi.Spec.Domain.Devices.Disks
	if len(disks) != 2 || disks[0].Disk.Bus != v1.DiskBusVirtio || disks[1].Disk.Bus != v1.DiskBusSATA {
		t.Errorf("example vmi disks %+v: want the given virtio bus kept and sata defaulted", disks)
	}
	if len(vmi.Spec.Networks) != 1 || vmi.Status.Phase != v1.Pending {
		t.Errorf("example vmi: networks %+v phase %q", vmi.Spec.Networks, vmi.Status.Phase)
	}
	vm, err := kv.VirtualMachines(ns).Get(ctx, "demo", metav1.GetOptions{})
	if err != nil || vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != v1.RunStrategyAlways {
		t.Errorf("example vm: %v, err %v", vm, err)
	}
	if vm != nil && (vm.Spec.Template == nil || vm.Spec.Template.Spec.Domain.Machine == nil || vm.Spec.Template.Spec.Domain.Machine.Type != "q35") {
		t.Errorf("example vm template machine type not defaulted: %+v", vm.Spec.Template)
	}
	vmim, err := kv.VirtualMachineInstanceMigrations(ns).Get(ctx, "migrate-testvmi", metav1.GetOptions{})
	if err != nil || vmim.Status.Phase != v1.MigrationPending {
		t.Errorf("example migration: %+v, err %v", vmim, err)
	}
	dv, err := server.Client.CdiV1beta1().DataVolumes(ns).Get(ctx, "tiny-guest-disk", metav1.GetOptions{})
	if err != nil || dv.Spec.Source == nil || dv.Spec.Source.HTTP == nil {
		t.Errorf("example datavolume: %+v, err %v", dv, err)
	}
}
