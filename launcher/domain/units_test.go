package domain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestParseMachineHelp(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "machine-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	types := ParseMachineHelp(string(help))
	for alias, want := range map[string]string{
		"q35": "pc-q35-7.2", "pc-q35-7.1": "pc-q35-7.1", "pc": "pc-i440fx-7.2", "none": "none",
	} {
		if got := types[alias]; got != want {
			t.Errorf("machine %q maps to %q, want %q", alias, got, want)
		}
	}
	if _, ok := types["Supported"]; ok {
		t.Error("the heading was taken for a machine type")
	}
}

func TestDiskLetters(t *testing.T) {
	for n, want := range map[int]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := diskLetters(n); got != want {
			t.Errorf("diskLetters(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCanonicalUUID(t *testing.T) {
	for in, want := range map[string]string{
		"6A1A24A1-4061-4607-8BF4-A3963D0C5895":   "6a1a24a1-4061-4607-8bf4-a3963d0c5895",
		"6a1a24a140614607 8bf4a3963d0c5895":      "6a1a24a1-4061-4607-8bf4-a3963d0c5895",
		" 6a-1a-24-a1-40614607-8bf4a3963d0c5895": "6a1a24a1-4061-4607-8bf4-a3963d0c5895",
		"6a1a24a1-4061-4607-8bf4-a3963d0c589":    "",
		"6a1a24a1-4061-4607-8bf4-a3963d0c58950":  "",
		"6a1a24a1-4061-4607-8bf4-a3963d0c589g":   "",
	} {
		got, ok := canonicalUUID(in)
		if got != want || ok != (want != "") {
			t.Errorf("canonicalUUID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestFirmwareUUIDDerivedFromUID(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.UID = types.UID("0f6d2a7c-9e81-4b3d-a5c2-7e9f1b3d5c70")
	a, err := FirmwareUUID(vmi)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FirmwareUUID(vmi.DeepCopy())
	if a != b || a == string(vmi.UID) {
		t.Errorf("derived UUIDs %q, %q: want stable and not the UID itself", a, b)
	}
	vmi.UID = ""
	if _, err := FirmwareUUID(vmi); err == nil {
		t.Error("a VMI without UID nor firmware UUID got a UUID")
	}
}

func TestInterfaceMAC(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.UID = "9d1f6c2e-3b4a-4f5e-8a7b-1c2d3e4f5a6b"
	iface := &v1.Interface{Name: "default"}
	mac, err := InterfaceMAC(vmi, iface)
	if err != nil {
		t.Fatal(err)
	}
	if mac != "02:76:0b:1b:86:0b" {
		t.Errorf("derived MAC %s changed; it must stay stable across releases", mac)
	}
	other, _ := InterfaceMAC(vmi, &v1.Interface{Name: "second"})
	if other == mac {
		t.Error("two interfaces got the same derived MAC")
	}
	iface.MacAddress = "DE-AD-00-00-BE-AF"
	if mac, _ := InterfaceMAC(vmi, iface); mac != "de:ad:00:00:be:af" {
		t.Errorf("given MAC came back as %s", mac)
	}
	iface.MacAddress = "00:11:22:33:44:55:66:77"
	if _, err := InterfaceMAC(vmi, iface); err == nil {
		t.Error("a 64-bit MAC was accepted")
	}
}

func TestMemory(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	cases := []struct {
		name   string
		domain v1.DomainSpec
		kib    uint
	}{
		{"guest", v1.DomainSpec{Memory: &v1.Memory{Guest: q("128Mi")}}, 131072},
		{"guest over request", v1.DomainSpec{Memory: &v1.Memory{Guest: q("64Mi")},
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: *q("1Gi")}}}, 65536},
		{"request, rounded up to MiB", v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: *q("1G")}}}, 954 * 1024},
		{"limit", v1.DomainSpec{
			Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: *q("2Gi")}}}, 2097152},
		{"zero request falls back to the limit", v1.DomainSpec{Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: *q("0")}, Limits: v1.ResourceList{v1.ResourceMemory: *q("1Mi")}}}, 1024},
	}
	for _, c := range cases {
		m, errs := memory(&c.domain, field.NewPath("spec", "domain"))
		if len(errs) > 0 {
			t.Errorf("%s: %v", c.name, errs)
			continue
		}
		if m.Unit != "KiB" || m.Value != c.kib {
			t.Errorf("%s: memory %d %s, want %d KiB", c.name, m.Value, m.Unit, c.kib)
		}
	}
}

func TestCPUModel(t *testing.T) {
	cases := []struct {
		model     string
		emulation Emulation
		want      libvirtxml.DomainCPU
	}{
		{"", EmulationKVM, libvirtxml.DomainCPU{Mode: "host-model"}},
		{"host-model", EmulationKVM, libvirtxml.DomainCPU{Mode: "host-model"}},
		{"host-passthrough", EmulationKVM, libvirtxml.DomainCPU{Mode: "host-passthrough"}},
		{"", EmulationTCG, libvirtxml.DomainCPU{Mode: "maximum", Migratable: "on"}},
		{"host-model", EmulationTCG, libvirtxml.DomainCPU{Mode: "maximum", Migratable: "on"}},
		{"Skylake-Server-v4", EmulationTCG, libvirtxml.DomainCPU{Mode: "custom", Match: "exact",
			Model: &libvirtxml.DomainCPUModel{Fallback: "forbid", Value: "Skylake-Server-v4"}}},
	}
	for _, c := range cases {
		var got libvirtxml.DomainCPU
		if errs := cpuModel(&got, c.model, c.emulation, field.NewPath("model")); len(errs) > 0 {
			t.Errorf("%q under %s: %v", c.model, c.emulation, errs)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q under %s (-want +got):\n%s", c.model, c.emulation, diff)
		}
	}
}

func TestCPUTopology(t *testing.T) {
	cases := []struct {
		cpu   *v1.CPU
		vcpus uint
		topo  libvirtxml.DomainCPUTopology
	}{
		{nil, 1, libvirtxml.DomainCPUTopology{Sockets: 1, Dies: 1, Cores: 1, Threads: 1}},
		{&v1.CPU{Cores: 4}, 4, libvirtxml.DomainCPUTopology{Sockets: 1, Dies: 1, Cores: 4, Threads: 1}},
		{&v1.CPU{Sockets: 2, Cores: 3, Threads: 2}, 12, libvirtxml.DomainCPUTopology{Sockets: 2, Dies: 1, Cores: 3, Threads: 2}},
	}
	for _, c := range cases {
		vcpu, out, errs := cpu(&v1.DomainSpec{CPU: c.cpu}, EmulationTCG, field.NewPath("spec", "domain"))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if vcpu.Value != c.vcpus || *out.Topology != c.topo {
			t.Errorf("%+v: %d vCPUs in %+v, want %d in %+v", c.cpu, vcpu.Value, *out.Topology, c.vcpus, c.topo)
		}
	}
}

func TestFeatures(t *testing.T) {
	p := field.NewPath("spec", "domain", "features")
	off := false
	cases := []struct {
		name string
		f    *v1.Features
		in   Inputs
		want libvirtxml.DomainFeatureList
	}{
		{"defaults: ACPI", nil, Inputs{Emulation: EmulationKVM}, libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}}},
		{"ACPI off", &v1.Features{ACPI: v1.FeatureState{Enabled: &off}}, Inputs{Emulation: EmulationKVM}, libvirtxml.DomainFeatureList{}},
		{"TCG cache under TCG", nil, Inputs{Emulation: EmulationTCG, TCGCacheMiB: 16}, libvirtxml.DomainFeatureList{
			ACPI: &libvirtxml.DomainFeature{},
			TCG:  &libvirtxml.DomainFeatureTCG{TBCache: &libvirtxml.DomainFeatureTCGTBCache{Unit: "MiB", Size: 16}}}},
		{"TCG cache ignored under KVM", nil, Inputs{Emulation: EmulationKVM, TCGCacheMiB: 16},
			libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}}},
		{"APIC with EOI under KVM, SMM off", &v1.Features{APIC: &v1.FeatureAPIC{EndOfInterrupt: true}, SMM: &v1.FeatureState{Enabled: &off}},
			Inputs{Emulation: EmulationKVM}, libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{},
				APIC: &libvirtxml.DomainFeatureAPIC{EOI: "on"}, SMM: &libvirtxml.DomainFeatureSMM{State: "off"}}},
	}
	for _, c := range cases {
		got, errs := features(&v1.DomainSpec{Features: c.f}, c.in, p)
		if len(errs) > 0 {
			t.Errorf("%s: %v", c.name, errs)
			continue
		}
		if diff := cmp.Diff(c.want, *got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestClockUTCOffset(t *testing.T) {
	offset := int64(-3600)
	got, errs := clock(&v1.Clock{ClockOffset: v1.ClockOffset{UTC: &v1.ClockOffsetUTC{OffsetSeconds: &offset}}}, EmulationTCG, field.NewPath("clock"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := libvirtxml.DomainClock{Offset: "variable", Basis: "utc", Adjustment: "-3600"}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiskTargetNames(t *testing.T) {
	spec := &v1.VirtualMachineInstanceSpec{}
	sources := map[string]DiskSource{}
	buses := []v1.DiskBus{v1.DiskBusVirtio, v1.DiskBusSATA, v1.DiskBusVirtio, v1.DiskBusSCSI, v1.DiskBusUSB}
	for i, bus := range buses {
		name := string(rune('a' + i))
		spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: bus}}})
		spec.Volumes = append(spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{}}})
		sources[name] = DiskSource{Path: "/d/" + name, Format: FormatQCOW2}
	}
	out, ctrls, errs := disks(spec, sources, field.NewPath("spec"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var devs []string
	for _, d := range out {
		devs = append(devs, d.Target.Dev)
	}
	if diff := cmp.Diff([]string{"vda", "sda", "vdb", "sdb", "sdc"}, devs); diff != "" {
		t.Errorf("target devices (-want +got):\n%s", diff)
	}
	if len(ctrls) != 1 || ctrls[0].Model != "virtio-scsi" {
		t.Errorf("controllers %+v, want one virtio-scsi controller", ctrls)
	}
}
