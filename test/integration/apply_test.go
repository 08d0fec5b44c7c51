package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	cdiapply "github.com/vireo-dev/vireo/generated/applyconfiguration/cdi/v1beta1"
	applyv1 "github.com/vireo-dev/vireo/generated/applyconfiguration/core/v1"
)

func vmApply(name, ns string, strategy v1.VirtualMachineRunStrategy) *applyv1.VirtualMachineApplyConfiguration {
	return applyv1.VirtualMachine(name, ns).WithSpec(applyv1.VirtualMachineSpec().
		WithRunStrategy(strategy).
		WithTemplate(applyv1.VirtualMachineInstanceTemplateSpec().WithSpec(applyv1.VirtualMachineInstanceSpec().
			WithDomain(applyv1.DomainSpec().WithMemory(applyv1.Memory().WithGuest(mustQuantity("64Mi")))))))
}

func TestServerSideApplyOwnershipAndConflicts(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vms := server.Client.KubevirtV1().VirtualMachines(ns)
	vm, err := vms.Apply(ctx, vmApply("ssa", ns, v1.RunStrategyAlways), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply as alice: %v", err)
	}
	if vm.Spec.RunStrategy == nil || *vm.Spec.RunStrategy != v1.RunStrategyAlways {
		t.Fatalf("runStrategy after apply: %v", vm.Spec.RunStrategy)
	}
	if !ownsField(vm.ManagedFields, "alice", "runStrategy") {
		t.Fatalf("alice does not own spec.runStrategy: %s", managedFieldsJSON(vm.ManagedFields))
	}

	// Applying the same field with another value as another manager conflicts...
	_, err = vms.Apply(ctx, vmApply("ssa", ns, v1.RunStrategyHalted), metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("apply as bob: got %v, want a conflict naming alice", err)
	}
	// ...unless forced, which moves ownership.
	vm, err = vms.Apply(ctx, vmApply("ssa", ns, v1.RunStrategyHalted), metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatalf("forced apply as bob: %v", err)
	}
	if *vm.Spec.RunStrategy != v1.RunStrategyHalted || !ownsField(vm.ManagedFields, "bob", "runStrategy") {
		t.Fatalf("after forced apply: runStrategy %v, managedFields %s", *vm.Spec.RunStrategy, managedFieldsJSON(vm.ManagedFields))
	}

	// Status applied through /status is owned separately and leaves spec alone.
	st := applyv1.VirtualMachine("ssa", ns).WithStatus(applyv1.VirtualMachineStatus().WithPrintableStatus(v1.VirtualMachineStatusStopped))
	vm, err = vms.ApplyStatus(ctx, st, metav1.ApplyOptions{FieldManager: "vireo-controller", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if vm.Status.PrintableStatus != v1.VirtualMachineStatusStopped || *vm.Spec.RunStrategy != v1.RunStrategyHalted {
		t.Fatalf("after status apply: printableStatus %q runStrategy %v", vm.Status.PrintableStatus, *vm.Spec.RunStrategy)
	}
}

func ownsField(entries []metav1.ManagedFieldsEntry, manager, field string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil &&
			strings.Contains(string(e.FieldsV1.Raw), `"f:`+field+`"`) {
			return true
		}
	}
	return false
}

func managedFieldsJSON(entries []metav1.ManagedFieldsEntry) string {
	b, _ := json.Marshal(entries)
	return string(b)
}

// vmManifest is a VirtualMachine as a user would keep it in a file and apply: a disk, its volume,
// an interface whose port names no protocol, and its network.
const vmManifest = `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: ssa-lists
spec:
  runStrategy: Halted
  template:
    spec:
      domain:
        memory:
          guest: 64Mi
        devices:
          disks:
          - name: root
            disk:
              bus: virtio
          interfaces:
          - name: default
            masquerade: {}
            ports:
            - name: ssh
              port: 22
      networks:
      - name: default
        pod: {}
      volumes:
      - name: root
        containerDisk:
          image: registry.local/tiny:1.0
`

// addDataDisk is a second manifest that only adds one disk and its volume to the same VM.
const addDataDisk = `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: ssa-lists
spec:
  template:
    spec:
      domain:
        devices:
          disks:
          - name: data
            disk:
              bus: virtio
      volumes:
      - name: data
        emptyDisk:
          capacity: 1Gi
`

func applyManifest(t *testing.T, ns, manager, manifest string, force bool) (*v1.VirtualMachine, error) {
	t.Helper()
	return server.Client.KubevirtV1().VirtualMachines(ns).Patch(context.Background(), "ssa-lists",
		types.ApplyPatchType, []byte(manifest), metav1.PatchOptions{FieldManager: manager, Force: &force})
}

// TestServerSideApplySharesListItems applies one manifest as two field managers: lists keyed by name
// (and ports keyed by port and protocol, with protocol defaulted to TCP) are merged per item, so the
// second manager shares ownership of the same items instead of conflicting with the first.
func TestServerSideApplySharesListItems(t *testing.T) {
	ns := namespace(t)
	if _, err := applyManifest(t, ns, "alice", vmManifest, false); err != nil {
		t.Fatalf("apply as alice: %v", err)
	}
	vm, err := applyManifest(t, ns, "bob", vmManifest, false)
	if err != nil {
		t.Fatalf("same manifest applied as bob without force: %v", err)
	}
	for _, manager := range []string{"alice", "bob"} {
		for _, key := range []string{`k:{\"name\":\"root\"}`, `k:{\"name\":\"default\"}`, `k:{\"port\":22,\"protocol\":\"TCP\"}`} {
			if !ownsKey(vm.ManagedFields, manager, key) {
				t.Errorf("%s does not own list item %s: %s", manager, key, managedFieldsJSON(vm.ManagedFields))
			}
		}
	}
	ports := vm.Spec.Template.Spec.Domain.Devices.Interfaces[0].Ports
	if len(ports) != 1 || ports[0].Protocol != "TCP" {
		t.Errorf("ports = %+v, want one port with protocol defaulted to TCP", ports)
	}
}

// TestServerSideApplyMergesAddedDisk applies a second manifest that adds one disk and its volume:
// they are merged with the existing ones instead of replacing the lists.
func TestServerSideApplyMergesAddedDisk(t *testing.T) {
	ns := namespace(t)
	if _, err := applyManifest(t, ns, "alice", vmManifest, false); err != nil {
		t.Fatalf("apply as alice: %v", err)
	}
	vm, err := applyManifest(t, ns, "bob", addDataDisk, false)
	if err != nil {
		t.Fatalf("apply of an added disk as bob: %v", err)
	}
	spec := vm.Spec.Template.Spec
	var disks, volumes []string
	for _, d := range spec.Domain.Devices.Disks {
		disks = append(disks, d.Name)
	}
	for _, v := range spec.Volumes {
		volumes = append(volumes, v.Name)
	}
	if strings.Join(disks, ",") != "root,data" || strings.Join(volumes, ",") != "root,data" {
		t.Fatalf("disks %v volumes %v, want root,data for both", disks, volumes)
	}
	// Re-applying alice's manifest keeps bob's disk: alice never owned it.
	vm, err = applyManifest(t, ns, "alice", vmManifest, false)
	if err != nil {
		t.Fatalf("re-apply as alice: %v", err)
	}
	if n := len(vm.Spec.Template.Spec.Domain.Devices.Disks); n != 2 {
		t.Errorf("after alice re-applied: %d disks, want 2", n)
	}
}

// ownsKey reports whether manager's apply entry mentions the list item key (as it appears in
// fieldsV1 JSON).
func ownsKey(entries []metav1.ManagedFieldsEntry, manager, key string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil &&
			strings.Contains(string(e.FieldsV1.Raw), key) {
			return true
		}
	}
	return false
}

// TestOpenAPIKeysListsForApply checks the served OpenAPI v3 schema that server-side apply and
// kubectl rely on: name-keyed lists are maps, ports are keyed by port and protocol, and protocol
// defaults to TCP so that an applied port without one has a complete key.
func TestOpenAPIKeysListsForApply(t *testing.T) {
	raw, err := server.Client.KubevirtV1().RESTClient().Get().AbsPath("/openapi/v3/apis/kubevirt.io/v1").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("openapi v3: %v", err)
	}
	type property struct {
		Default  any      `json:"default"`
		ListType string   `json:"x-kubernetes-list-type"`
		MapKeys  []string `json:"x-kubernetes-list-map-keys"`
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]property `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decoding openapi v3: %v", err)
	}
	const pkg = "com.github.vireo-dev.vireo.apis.core.v1."
	for _, c := range []struct {
		schema, field string
		keys          []string
	}{
		{"Devices", "disks", []string{"name"}},
		{"Devices", "interfaces", []string{"name"}},
		{"VirtualMachineInstanceSpec", "volumes", []string{"name"}},
		{"VirtualMachineInstanceSpec", "networks", []string{"name"}},
		{"Interface", "ports", []string{"port", "protocol"}},
		{"VirtualMachineInstanceStatus", "conditions", []string{"type"}},
		{"VirtualMachineStatus", "conditions", []string{"type"}},
		{"VirtualMachineInstanceMigrationStatus", "conditions", []string{"type"}},
	} {
		p := doc.Components.Schemas[pkg+c.schema].Properties[c.field]
		if p.ListType != "map" || strings.Join(p.MapKeys, ",") != strings.Join(c.keys, ",") {
			t.Errorf("%s.%s: list type %q keys %v, want map keyed by %v", c.schema, c.field, p.ListType, p.MapKeys, c.keys)
		}
	}
	if p := doc.Components.Schemas[pkg+"Port"].Properties["protocol"]; p.Default != "TCP" {
		t.Errorf("Port.protocol default = %v, want TCP", p.Default)
	}
	if p := doc.Components.Schemas[pkg+"VirtualMachineInstanceStatus"].Properties["phaseTransitionTimestamps"]; p.ListType != "atomic" {
		t.Errorf("phaseTransitionTimestamps list type = %q, want atomic (phases repeat)", p.ListType)
	}
}

// TestStrictFieldValidationAcceptsKubeVirtClientZeroes creates a VMI the way KubeVirt's Go client
// serializes it (status.runtimeUser: 0, empty guestOSInfo and resources, null timestamps) with
// strict server-side field validation, as kubectl does: no field is unknown.
func TestStrictFieldValidationAcceptsKubeVirtClientZeroes(t *testing.T) {
	ns := namespace(t)
	body := `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
	  "metadata":{"name":"zeroes","creationTimestamp":null},
	  "spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},"machine":{"type":""},"features":{"acpi":{}},"devices":{}},
	    "volumes":[{"name":"root","containerDisk":{"image":"registry.local/tiny:1.0"}}]},
	  "status":{"guestOSInfo":{},"runtimeUser":0}}`
	err := server.Client.KubevirtV1().RESTClient().Post().Namespace(ns).Resource("virtualmachineinstances").
		Param("fieldValidation", "Strict").Body([]byte(body)).Do(context.Background()).Error()
	if err != nil {
		t.Fatalf("strict create of a KubeVirt-client VMI: %v", err)
	}
}

// TestApplyToTheMainResourceOwnsNoStatus: status sent through the main resource is ignored and
// leaves the sender owning nothing of it, so the controller's later status applies never conflict.
func TestApplyToTheMainResourceOwnsNoStatus(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	dvs := server.Client.CdiV1beta1().DataVolumes(ns)
	dv := cdiapply.DataVolume("owned", ns).
		WithSpec(cdiapply.DataVolumeSpec().
			WithSource(cdiapply.DataVolumeSource().WithBlank(cdiv1beta1.DataVolumeBlankImage{})).
			WithStorage(cdiapply.StorageSpec().WithResources(cdiapply.VolumeResourceRequirements().
				WithRequests(cdiv1beta1.ResourceList{cdiv1beta1.ResourceStorage: mustQuantity("1Gi")})))).
		WithStatus(cdiapply.DataVolumeStatus().WithPhase(cdiv1beta1.Succeeded))
	got, err := dvs.Apply(ctx, dv, metav1.ApplyOptions{FieldManager: "user"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if got.Status.Phase == cdiv1beta1.Succeeded || ownsField(got.ManagedFields, "user", "phase") {
		t.Fatalf("status through the main resource: phase %q, managedFields %s", got.Status.Phase, managedFieldsJSON(got.ManagedFields))
	}
	st := cdiapply.DataVolume("owned", ns).WithStatus(cdiapply.DataVolumeStatus().WithPhase(cdiv1beta1.ImportInProgress))
	if _, err := dvs.ApplyStatus(ctx, st, metav1.ApplyOptions{FieldManager: "vireo-controller"}); err != nil {
		t.Errorf("the controller's status apply after a user's apply: %v", err)
	}
}
