package defaults

import (
	"testing"

	"github.com/google/uuid"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestVMRunningIsStoredAsWritten(t *testing.T) {
	manual := v1.RunStrategyManual
	for _, spec := range []v1.VirtualMachineSpec{
		{Running: ptr.To(true)},
		{Running: ptr.To(false)},
		{RunStrategy: &manual},
		{Running: ptr.To(true), RunStrategy: &manual}, // left for validation to refuse
		{},
	} {
		vm := &v1.VirtualMachine{Spec: *spec.DeepCopy()}
		SetVirtualMachineDefaults(vm)
		if !apiequality.Semantic.DeepEqual(vm.Spec, spec) {
			t.Errorf("defaults changed running/runStrategy: got %+v, want %+v", vm.Spec, spec)
		}
	}
}

func TestVMTemplateDefaults(t *testing.T) {
	vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{Template: &v1.VirtualMachineInstanceTemplateSpec{
		Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{volume("a")}},
	}}}
	SetVirtualMachineDefaults(vm)
	// Only what KubeVirt's VM mutator sets: architecture and machine type.
	want := v1.VirtualMachineInstanceSpec{
		Architecture: "amd64",
		Domain:       v1.DomainSpec{Machine: &v1.Machine{Type: "q35"}},
		Volumes:      []v1.Volume{volume("a")},
	}
	if tmpl := vm.Spec.Template.Spec; !apiequality.Semantic.DeepEqual(tmpl, want) {
		t.Errorf("template spec = %+v, want only architecture and machine type added: %+v", tmpl, want)
	}

	vm.Spec.Template.Spec.Domain.Machine.Type = "pc-q35-9.0"
	vm.Spec.Template.Spec.Architecture = "arm64"
	SetVirtualMachineDefaults(vm)
	if got := vm.Spec.Template.Spec; got.Domain.Machine.Type != "pc-q35-9.0" || got.Architecture != "arm64" {
		t.Errorf("template = %s/%s, want the user's pc-q35-9.0/arm64", got.Domain.Machine.Type, got.Architecture)
	}

	noTemplate := &v1.VirtualMachine{}
	SetVirtualMachineDefaults(noTemplate) // must not panic
	SetVirtualMachineIdentity(noTemplate)
	if noTemplate.Spec.Template != nil {
		t.Errorf("a template was invented: %+v", noTemplate.Spec.Template)
	}
}

func newVM(name string, fw *v1.Firmware) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.VirtualMachineSpec{Template: &v1.VirtualMachineInstanceTemplateSpec{
			Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Firmware: fw}},
		}},
	}
}

func TestVMIdentityIsRandomAndKept(t *testing.T) {
	a, b := newVM("vm", nil), newVM("vm", nil)
	SetVirtualMachineIdentity(a)
	SetVirtualMachineIdentity(b)
	fa, fb := a.Spec.Template.Spec.Domain.Firmware, b.Spec.Template.Spec.Domain.Firmware
	if _, err := uuid.Parse(string(fa.UUID)); err != nil || fa.Serial == "" {
		t.Fatalf("identity = %+v, want a UUID and a serial", fa)
	}
	if fa.UUID == fb.UUID || fa.Serial == fb.Serial {
		t.Errorf("two VMs of the same name share an identity: %+v and %+v", fa, fb)
	}

	mine := newVM("vm", &v1.Firmware{UUID: "u1", Serial: "s1"})
	SetVirtualMachineIdentity(mine)
	if fw := mine.Spec.Template.Spec.Domain.Firmware; fw.UUID != "u1" || fw.Serial != "s1" {
		t.Errorf("identity = %+v, want the user's u1/s1", fw)
	}

	// An update that leaves the identity out (kubectl apply of the original manifest) keeps it.
	update := newVM("vm", nil)
	RetainVirtualMachineIdentity(update, a)
	if fw := update.Spec.Template.Spec.Domain.Firmware; fw.UUID != fa.UUID || fw.Serial != fa.Serial {
		t.Errorf("identity after update = %+v, want the stored %+v", fw, fa)
	}
	// An update that sets its own identity wins.
	update = newVM("vm", &v1.Firmware{UUID: "u2"})
	RetainVirtualMachineIdentity(update, a)
	if fw := update.Spec.Template.Spec.Domain.Firmware; fw.UUID != "u2" || fw.Serial != fa.Serial {
		t.Errorf("identity after update = %+v, want uuid u2 and the stored serial", fw)
	}
}

func TestVMStoredWithoutIdentityGetsTheLegacyUUID(t *testing.T) {
	old := newVM("testvm", nil)
	update := newVM("testvm", nil)
	RetainVirtualMachineIdentity(update, old)
	if got := update.Spec.Template.Spec.Domain.Firmware.UUID; got != LegacyFirmwareUUID("testvm") {
		t.Errorf("uuid = %s, want KubeVirt's legacy %s", got, LegacyFirmwareUUID("testvm"))
	}
}

func TestMigrationDefaults(t *testing.T) {
	m := &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Finalizers: []string{"x/y"}},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: "testvmi"},
	}
	SetMigrationDefaults(m)
	SetMigrationDefaults(m) // idempotent
	if got := m.Labels; got["kubevirt.io/vmi-name"] != "testvmi" || got["team"] != "a" {
		t.Errorf("labels = %v, want the user's and kubevirt.io/vmi-name=testvmi", got)
	}
	if got := m.Finalizers; len(got) != 2 || got[1] != "kubevirt.io/migrationJobFinalize" {
		t.Errorf("finalizers = %v, want the user's and kubevirt.io/migrationJobFinalize once", got)
	}
}
