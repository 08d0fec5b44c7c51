package vmi

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// storedByAnEarlierVersion is a VMI as Vireo stored it before architecture, ACPI and the CD-ROM
// tray were defaulted (and while the grace period still was): defaulting it today changes it.
func storedByAnEarlierVersion() *v1.VirtualMachineInstance {
	grace := int64(30)
	readOnly := true
	guest := resource.MustParse("64Mi")
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name: "old", Namespace: "ns", ResourceVersion: "7", Generation: 1,
			Finalizers: []string{v1.LegacyVirtualMachineInstanceFinalizer},
		},
		Spec: v1.VirtualMachineInstanceSpec{
			TerminationGracePeriodSeconds: &grace,
			Domain: v1.DomainSpec{
				Machine:  &v1.Machine{Type: "q35"},
				CPU:      &v1.CPU{Sockets: 1, Cores: 1, Threads: 1},
				Memory:   &v1.Memory{Guest: &guest},
				Firmware: &v1.Firmware{UUID: "1cdc5eb9-6297-506a-8b81-1115691a0322"},
				Devices: v1.Devices{Disks: []v1.Disk{{Name: "cd", DiskDevice: v1.DiskDevice{
					CDRom: &v1.CDRomTarget{Bus: v1.DiskBusSATA, ReadOnly: &readOnly},
				}}}},
			},
			Volumes: []v1.Volume{{Name: "cd", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{
				Image: "registry.local/iso:1", ImagePullPolicy: v1.PullIfNotPresent,
			}}}},
		},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Pending},
	}
}

func TestMetadataUpdateOfAVMIStoredByAnEarlierVersion(t *testing.T) {
	strategy := storeutil.NewStrategy(runtime.NewScheme(), Resource().Hooks)
	ctx := context.Background()
	old := storedByAnEarlierVersion()
	update := old.DeepCopy()
	update.Finalizers = nil // the controller releasing its finalizer
	strategy.PrepareForUpdate(ctx, update, old)
	if errs := strategy.ValidateUpdate(ctx, update, old); len(errs) > 0 {
		t.Fatalf("releasing the finalizer of a VMI stored by an earlier version: %v", errs)
	}
	if update.Spec.Architecture != "" || update.Generation != old.Generation {
		t.Errorf("the stored spec was rewritten (architecture %q, generation %d): want it kept as stored",
			update.Spec.Architecture, update.Generation)
	}

	changed := old.DeepCopy()
	changed.Spec.Hostname = "other"
	strategy.PrepareForUpdate(ctx, changed, old)
	if errs := strategy.ValidateUpdate(ctx, changed, old); len(errs) == 0 {
		t.Errorf("a real change of an old VMI's spec was accepted")
	}
}
