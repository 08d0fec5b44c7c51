package vmi

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
)

func TestUnsupportedFields(t *testing.T) {
	spec := v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{
			CPU:      &v1.CPU{DedicatedCPUPlacement: true},
			Features: &v1.Features{ACPI: v1.FeatureState{}, Hyperv: &v1.FeatureHyperv{}},
			Devices: v1.Devices{
				TPM:   &v1.TPMDevice{},
				Disks: []v1.Disk{{Name: "a"}, {Name: "b", DiskDevice: v1.DiskDevice{LUN: &v1.LunTarget{}}}},
			},
		},
		Volumes: []v1.Volume{{Name: "a"}, {Name: "b", VolumeSource: v1.VolumeSource{HostDisk: &v1.HostDisk{}}}},
	}
	want := []string{
		"spec.domain.cpu.dedicatedCpuPlacement", "spec.domain.features.hyperv", "spec.domain.devices.tpm",
		"spec.domain.devices.disks[1].lun", "spec.volumes[1].hostDisk",
	}
	if got := unsupportedFields(&spec); !slices.Equal(got, want) {
		t.Errorf("unsupportedFields = %v, want %v", got, want)
	}
	if got := unsupportedFields(&v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Features: &v1.Features{}}}); got != nil {
		t.Errorf("a plain VMI: %v, want nothing unsupported", got)
	}
	// KubeVirt's fields that Vireo stores: what it cannot do is named; what it does (a VGA
	// display, no balloon, a link that is up, an IPv6 CIDR a v4 masquerade never uses) is not.
	more := v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{Devices: v1.Devices{
			GPUs:                 []v1.GPU{{Name: "g", DeviceName: "nvidia.com/T4"}},
			Video:                &v1.VideoDevice{Type: "vga"},
			AutoattachMemBalloon: new(false),
			Interfaces: []v1.Interface{
				{Name: "a", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}, State: "up"},
				{Name: "b", InterfaceBindingMethod: v1.InterfaceBindingMethod{SRIOV: &v1.InterfaceSRIOV{}}, State: "down"},
				{Name: "c", InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}},
			},
		}},
		Networks: []v1.Network{{Name: "a", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{VMIPv6NetworkCIDR: "fd10:0:2::/120"}}},
			{Name: "b", NetworkSource: v1.NetworkSource{Multus: &v1.MultusNetwork{NetworkName: "x"}}}},
		Volumes:        []v1.Volume{{Name: "dump", VolumeSource: v1.VolumeSource{MemoryDump: &v1.MemoryDumpVolumeSource{}}}},
		UtilityVolumes: []v1.UtilityVolume{{Name: "u"}},
	}
	want = []string{"spec.domain.devices.gpus", "spec.domain.devices.interfaces[1].sriov", "spec.domain.devices.interfaces[1].state",
		"spec.domain.devices.interfaces[2].bridge", "spec.networks[1].multus", "spec.volumes[0].memoryDump", "spec.utilityVolumes"}
	if got := unsupportedFields(&more); !slices.Equal(got, want) {
		t.Errorf("unsupportedFields = %v, want %v", got, want)
	}
}

func TestVMIAskingForWhatVireoCannotRunFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tpm := &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "tpm", Namespace: "ns"},
		Spec:       v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Devices: v1.Devices{TPM: &v1.TPMDevice{}}}},
		// A Synchronized condition already there is replaced, not duplicated.
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Pending, Conditions: []v1.VirtualMachineInstanceCondition{
			{Type: v1.VirtualMachineInstanceSynchronized, Status: v1.ConditionTrue},
		}},
	}
	plain := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", UID: "uid-plain"},
		Spec:   v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"memory": resource.MustParse("64Mi")}}}},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Pending}}
	vireo := vireofake.NewClientset(tpm, plain)
	ctrl := startController(ctx, t, vireo)
	for _, name := range []string{"tpm", "plain"} {
		if err := ctrl.sync(ctx, "ns/"+name); err != nil {
			t.Fatalf("sync %s: %v", name, err)
		}
	}
	got, err := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "tpm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.Failed || got.Status.Reason != UnsupportedReason || len(got.Status.Conditions) != 1 ||
		!strings.Contains(got.Status.Conditions[0].Message, "spec.domain.devices.tpm") {
		t.Errorf("status = %+v, want Failed/Unsupported naming spec.domain.devices.tpm", got.Status)
	}
	if got, _ := vireo.KubevirtV1().VirtualMachineInstances("ns").Get(ctx, "plain", metav1.GetOptions{}); got.Status.Phase != v1.Scheduling {
		t.Errorf("a plain VMI became %s, want it Scheduling like any other", got.Status.Phase)
	}
}
