package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster"
)

// The objects below are what KubeVirt's mutating webhooks and generated defaulters (and CDI's)
// make of the example manifests, written out by hand from their rules:
//   - VMI: architecture amd64, machine q35, sockets from the CPU request (100m rounds up to 1) with
//     one core and thread, guest memory from the memory request, a random firmware UUID, ACPI
//     enabled, a disk for every volume with the sata bus where none is named, the pod network,
//     pull policy Always for a :latest containerDisk, terminationGracePeriodSeconds left unset,
//     the foreground-delete finalizer and phase Pending. Two deliberate differences: the default
//     interface binding is masquerade (KubeVirt's code default is bridge, which Vireo does not
//     run), and the CPU model stays empty (the node picks it: host-model does not exist under TCG).
//   - VM: only architecture and machine type in the template (KubeVirt's VM mutator), plus the
//     random firmware UUID and serial Vireo stores at creation so every VMI of the VM shows the
//     same identity (where KubeVirt's VM controller stores a UUID).
//   - Migration: the kubevirt.io/vmi-name label, KubeVirt's migration finalizer, phase Pending.
//   - DataVolume: nothing is defaulted in the spec.
const (
	kubevirtVMI = `
metadata:
  labels: {app: demo}
  finalizers: [foregroundDeleteVirtualMachine]
spec:
  architecture: amd64
  domain:
    resources: {requests: {memory: 128Mi, cpu: 100m}}
    cpu: {sockets: 1, cores: 1, threads: 1}
    memory: {guest: 128Mi}
    machine: {type: q35}
    firmware: {uuid: RANDOM}
    features: {acpi: {enabled: true}}
    devices:
      disks:
        - {name: containerdisk, disk: {bus: virtio}}
        - {name: cloudinit, disk: {bus: sata}}
      interfaces:
        - {name: default, masquerade: {}}
  networks:
    - {name: default, pod: {}}
  volumes:
    - name: containerdisk
      containerDisk: {image: "10.250.0.1:5000/vireo/tiny-containerdisk:latest", imagePullPolicy: Always}
    - name: cloudinit
      cloudInitNoCloud:
        userData: |
          #!/bin/sh
          echo "hello from cloud-init on $(hostname)"
status:
  phase: Pending
`
	kubevirtVM = `
spec:
  runStrategy: Always
  template:
    metadata:
      labels: {app: demo}
    spec:
      architecture: amd64
      domain:
        cpu: {cores: 1}
        memory: {guest: 128Mi}
        machine: {type: q35}
        firmware: {uuid: RANDOM, serial: RANDOM}
        devices: {}
      volumes:
        - name: rootdisk
          containerDisk: {image: "10.250.0.1:5000/vireo/tiny-containerdisk:latest"}
`
	kubevirtMigration = `
metadata:
  labels: {kubevirt.io/vmi-name: testvmi}
  finalizers: [kubevirt.io/migrationJobFinalize]
spec:
  vmiName: testvmi
status:
  phase: Pending
`
	cdiDataVolume = `
spec:
  source:
    http:
      url: http://images.example.internal/tiny-guest.qcow2.xz
      checksum: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
  storage:
    accessModes: [ReadWriteOnce]
    resources: {requests: {storage: 1Gi}}
`
)

// TestExamplesDefaultAsKubeVirtDoes creates every example and compares each stored object, field
// by field, with what KubeVirt's rules make of the same manifest.
func TestExamplesDefaultAsKubeVirtDoes(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	applier, err := localcluster.NewApplier(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vmi-demo.yaml", "vm-demo.yaml", "vmim-demo.yaml", "dv-import.yaml"} {
		if err := applier.CreateFile(ctx, filepath.Join("../../artifacts/examples", f), ns); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	kv, get := server.Client.KubevirtV1(), metav1.GetOptions{}

	vmi, err := kv.VirtualMachineInstances(ns).Get(ctx, "testvmi", get)
	if err != nil {
		t.Fatal(err)
	}
	want := expected[v1.VirtualMachineInstance](t, kubevirtVMI)
	want.Spec.Domain.Firmware.UUID = randomUUID(t, "vmi firmware uuid", vmi.Spec.Domain.Firmware.UUID)
	compare(t, "VirtualMachineInstance", want.ObjectMeta, want.Spec, want.Status.Phase, vmi.ObjectMeta, vmi.Spec, vmi.Status.Phase)

	vm, err := kv.VirtualMachines(ns).Get(ctx, "demo", get)
	if err != nil {
		t.Fatal(err)
	}
	wantVM := expected[v1.VirtualMachine](t, kubevirtVM)
	fw, gotFW := wantVM.Spec.Template.Spec.Domain.Firmware, vm.Spec.Template.Spec.Domain.Firmware
	if gotFW != nil {
		fw.UUID = randomUUID(t, "vm firmware uuid", gotFW.UUID)
		fw.Serial = randomUUID(t, "vm firmware serial", gotFW.Serial)
	}
	compare(t, "VirtualMachine", wantVM.ObjectMeta, wantVM.Spec, "", vm.ObjectMeta, vm.Spec, "")

	m, err := kv.VirtualMachineInstanceMigrations(ns).Get(ctx, "migrate-testvmi", get)
	if err != nil {
		t.Fatal(err)
	}
	wantM := expected[v1.VirtualMachineInstanceMigration](t, kubevirtMigration)
	compare(t, "VirtualMachineInstanceMigration", wantM.ObjectMeta, wantM.Spec, wantM.Status.Phase, m.ObjectMeta, m.Spec, m.Status.Phase)

	dv, err := server.Client.CdiV1beta1().DataVolumes(ns).Get(ctx, "tiny-guest-disk", get)
	if err != nil {
		t.Fatal(err)
	}
	wantDV := expected[cdiv1beta1.DataVolume](t, cdiDataVolume)
	compare(t, "DataVolume", wantDV.ObjectMeta, wantDV.Spec, "", dv.ObjectMeta, dv.Spec, "")
}

// expected decodes one of the documents above.
func expected[T any](t *testing.T, doc string) *T {
	t.Helper()
	out := new(T)
	if err := yaml.UnmarshalStrict([]byte(doc), out); err != nil {
		t.Fatalf("expected object: %v", err)
	}
	return out
}

// randomUUID checks a value the server chose at random is a UUID and returns it.
func randomUUID[T ~string](t *testing.T, what string, got T) T {
	t.Helper()
	if _, err := uuid.Parse(string(got)); err != nil {
		t.Errorf("%s %q is not a random UUID: %v", what, got, err)
	}
	return got
}

// compare checks labels, annotations, finalizers, spec and phase against the expected ones.
func compare[S any, P comparable](t *testing.T, kind string, wantMeta metav1.ObjectMeta, wantSpec S, wantPhase P, gotMeta metav1.ObjectMeta, gotSpec S, gotPhase P) {
	t.Helper()
	meta := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		return metav1.ObjectMeta{Labels: m.Labels, Annotations: m.Annotations, Finalizers: m.Finalizers}
	}
	if d := cmp.Diff(meta(wantMeta), meta(gotMeta)); d != "" {
		t.Errorf("%s metadata differs from KubeVirt's (-KubeVirt +Vireo):\n%s", kind, d)
	}
	if d := cmp.Diff(wantSpec, gotSpec); d != "" {
		t.Errorf("%s spec differs from KubeVirt's (-KubeVirt +Vireo):\n%s", kind, d)
	}
	if wantPhase != gotPhase {
		t.Errorf("%s phase %v, want %v", kind, gotPhase, wantPhase)
	}
}
