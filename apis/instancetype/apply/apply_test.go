package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
)

var base = field.NewPath("spec", "template", "spec")

func small() *v1beta1.VirtualMachineInstancetypeSpec {
	return &v1beta1.VirtualMachineInstancetypeSpec{CPU: v1beta1.CPUInstancetype{Guest: 4},
		Memory: v1beta1.MemoryInstancetype{Guest: resource.MustParse("2Gi")}, Annotations: map[string]string{"size": "small"}}
}

// TestInstancetypeIsAuthoritative: the instancetype's vCPUs (as sockets by default), memory and
// annotations land in the spec; a VM that sets them too gets KubeVirt's conflict naming each field,
// and then nothing of the preference.
func TestInstancetypeIsAuthoritative(t *testing.T) {
	spec, meta := &v1.VirtualMachineInstanceSpec{}, &metav1.ObjectMeta{}
	if c := Spec(base, small(), nil, spec, meta); c != nil {
		t.Fatalf("conflicts %v", c)
	}
	cpu := spec.Domain.CPU
	if cpu.Sockets != 4 || cpu.Cores != 1 || cpu.Threads != 1 || spec.Domain.Memory.Guest.String() != "2Gi" || meta.Annotations["size"] != "small" {
		t.Errorf("applied: cpu %+v memory %v annotations %v", cpu, spec.Domain.Memory.Guest, meta.Annotations)
	}

	conflicting := &v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
		CPU: &v1.CPU{Cores: 2}, Memory: &v1.Memory{Guest: new(resource.MustParse("1Gi"))},
	}}
	pref := &v1beta1.VirtualMachinePreferenceSpec{Machine: &v1beta1.MachinePreferences{PreferredMachineType: "q35"}}
	c := Spec(base, small(), pref, conflicting, &metav1.ObjectMeta{Annotations: map[string]string{"size": "large"}})
	errs := c.Errors()
	if len(errs) != 3 || errs[0].Field != "spec.template.spec.domain.cpu.cores" || errs[1].Field != "spec.template.spec.domain.memory.guest" ||
		errs[2].Field != "annotations[size]" {
		t.Fatalf("conflicts %v", errs)
	}
	want := "VM field(s) spec.template.spec.domain.cpu.cores, spec.template.spec.domain.memory.guest, annotations[size] conflicts with selected instance type"
	if errs[0].Detail != want {
		t.Errorf("message %q, want %q", errs[0].Detail, want)
	}
	if conflicting.Domain.Machine != nil {
		t.Error("the preference was applied despite the conflicts")
	}
	requests := &v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}}}}
	if errs := Spec(base, small(), nil, requests, nil).Errors(); len(errs) != 2 || !strings.HasSuffix(errs[0].Field, "resources.requests.cpu") ||
		!strings.HasSuffix(errs[1].Field, "resources.requests.memory") {
		t.Errorf("resource requests: %v", errs)
	}
}

func TestTopology(t *testing.T) {
	topology := func(t v1beta1.PreferredCPUTopology, o *v1beta1.SpreadOptions) *v1beta1.VirtualMachinePreferenceSpec {
		return &v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{PreferredCPUTopology: &t, SpreadOptions: o}}
	}
	across := func(a v1beta1.SpreadAcross, ratio uint32) *v1beta1.SpreadOptions {
		return &v1beta1.SpreadOptions{Across: &a, Ratio: &ratio}
	}
	for _, c := range []struct {
		vCPUs uint32
		pref  *v1beta1.VirtualMachinePreferenceSpec
		want  [3]uint32
	}{
		{1, topology(v1beta1.PreferCores, nil), [3]uint32{1, 1, 1}},
		{8, nil, [3]uint32{8, 1, 1}},
		{8, topology(v1beta1.PreferCores, nil), [3]uint32{1, 8, 1}},
		{8, topology(v1beta1.DeprecatedPreferThreads, nil), [3]uint32{1, 1, 8}},
		{8, topology(v1beta1.PreferAny, nil), [3]uint32{8, 1, 1}},
		{8, topology(v1beta1.PreferSpread, nil), [3]uint32{4, 2, 1}},
		{8, topology(v1beta1.PreferSpread, across(v1beta1.SpreadAcrossCoresThreads, 2)), [3]uint32{1, 4, 2}},
		{16, topology(v1beta1.PreferSpread, across(v1beta1.SpreadAcrossSocketsCoresThreads, 4)), [3]uint32{2, 4, 2}},
	} {
		s, co, th := Topology(c.vCPUs, c.pref)
		if [3]uint32{s, co, th} != c.want {
			t.Errorf("%d vCPUs, %+v: %d/%d/%d, want %v", c.vCPUs, c.pref, s, co, th, c.want)
		}
	}
}

func TestMemoryOvercommit(t *testing.T) {
	it := small()
	it.Memory.OvercommitPercent = 25
	spec := &v1.VirtualMachineInstanceSpec{}
	Spec(base, it, nil, spec, nil)
	if got := spec.Domain.Resources.Requests[v1.ResourceMemory]; got.Value() != 3*(1<<30)/2 {
		t.Errorf("memory request with 25%% overcommit of 2Gi: %v, want 1.5Gi", got.String())
	}
}

// TestPreferenceFillsWhatIsUnset: a preference sets the disk bus, interface model, machine type,
// firmware and grace period only where the VM sets none, and never overrides an annotation.
func TestPreferenceFillsWhatIsUnset(t *testing.T) {
	spec := &v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{Devices: v1.Devices{
			Disks: []v1.Disk{{Name: "root"}, {Name: "data", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSATA}}},
				{Name: "cd", DiskDevice: v1.DiskDevice{CDRom: &v1.CDRomTarget{}}}},
			Interfaces: []v1.Interface{{Name: "default"}},
		}},
		Networks:                      []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
		TerminationGracePeriodSeconds: new(int64(5)),
	}
	meta := &metav1.ObjectMeta{Annotations: map[string]string{"os": "mine"}}
	pref := &v1beta1.VirtualMachinePreferenceSpec{
		Devices: &v1beta1.DevicePreferences{PreferredDiskBus: v1.DiskBusVirtio, PreferredCdromBus: v1.DiskBusSATA,
			PreferredInterfaceModel: "virtio", PreferredInterfaceMasquerade: &v1.InterfaceMasquerade{}, PreferredDiskDedicatedIoThread: new(true)},
		Machine:                                &v1beta1.MachinePreferences{PreferredMachineType: "q35"},
		Firmware:                               &v1beta1.FirmwarePreferences{PreferredEfi: &v1.EFI{SecureBoot: new(false)}},
		PreferredTerminationGracePeriodSeconds: new(int64(180)),
		Annotations:                            map[string]string{"os": "fedora", "family": "linux"},
	}
	if c := Spec(base, nil, pref, spec, meta); c != nil {
		t.Fatal(c)
	}
	d := spec.Domain.Devices
	if d.Disks[0].Disk.Bus != v1.DiskBusVirtio || d.Disks[0].DedicatedIOThread == nil || d.Disks[1].Disk.Bus != v1.DiskBusSATA ||
		d.Disks[1].DedicatedIOThread != nil || d.Disks[2].CDRom.Bus != v1.DiskBusSATA {
		t.Errorf("disks %+v", d.Disks)
	}
	if d.Interfaces[0].Model != "virtio" || d.Interfaces[0].Masquerade == nil {
		t.Errorf("interface %+v", d.Interfaces[0])
	}
	if spec.Domain.Machine.Type != "q35" || spec.Domain.Firmware.Bootloader.EFI == nil || *spec.TerminationGracePeriodSeconds != 5 {
		t.Errorf("machine %+v firmware %+v grace %d", spec.Domain.Machine, spec.Domain.Firmware, *spec.TerminationGracePeriodSeconds)
	}
	if meta.Annotations["os"] != "mine" || meta.Annotations["family"] != "linux" {
		t.Errorf("annotations %v", meta.Annotations)
	}
	empty := &v1.VirtualMachineInstanceSpec{}
	Spec(base, nil, &v1beta1.VirtualMachinePreferenceSpec{Features: &v1beta1.FeaturePreferences{}, Clock: &v1beta1.ClockPreferences{},
		Firmware: &v1beta1.FirmwarePreferences{}}, empty, nil)
	if empty.Domain.Features != nil || empty.Domain.Clock != nil || empty.Domain.Firmware != nil {
		t.Errorf("an empty preference left empty objects: %+v", empty.Domain)
	}
	// The disk of a volume without one, and the pod network's interface, get the preference too.
	bare := &v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{{Name: "root"}}}
	Spec(base, nil, pref, bare, nil)
	if d := bare.Domain.Devices; len(d.Disks) != 1 || d.Disks[0].Disk.Bus != v1.DiskBusVirtio || len(d.Interfaces) != 1 || d.Interfaces[0].Model != "virtio" {
		t.Errorf("default devices: %+v", d)
	}
}
