package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster"
)

// TestExamplesAreAcceptedAndDefaulted creates every Vireo object of artifacts/examples the
// way `vireo-local up --apply` does and checks Vireo's defaults on the results. The server here
// serves only Vireo's groups: the examples' core objects (a PVC) are left out.
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
		if err := applier.CreateFile(ctx, vireoObjectsOf(t, f), ns); err != nil {
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

// vireoObjectsOf writes the documents of a manifest that are Vireo's kinds into a file of the
// test's and returns its path.
func vireoObjectsOf(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "apiVersion: kubevirt.io/") || strings.Contains(doc, "apiVersion: cdi.kubevirt.io/") {
			keep = append(keep, doc)
		}
	}
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(out, []byte(strings.Join(keep, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}
