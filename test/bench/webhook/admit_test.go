package webhook

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vmiregistry "github.com/vireo-dev/vireo/registry/vmi"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

const group = "bench.vireo.dev"

// customResource is vmi as the CRD of group stores it.
func customResource(t *testing.T, vmi *v1.VirtualMachineInstance) []byte {
	t.Helper()
	vmi = vmi.DeepCopy()
	vmi.APIVersion = group + "/v1"
	data, err := json.Marshal(vmi)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func request(op admissionv1.Operation, obj, old []byte) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{
		UID: "uid-1", Operation: op, Name: "obj-0", Namespace: "ns",
		Kind:      metav1.GroupVersionKind{Group: group, Version: "v1", Kind: "VirtualMachineInstance"},
		Object:    runtime.RawExtension{Raw: obj},
		OldObject: runtime.RawExtension{Raw: old},
	}
}

// patched applies the response's JSON Patch to doc with the library kube-apiserver uses.
func patched(t *testing.T, doc []byte, resp *admissionv1.AdmissionResponse) []byte {
	t.Helper()
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result)
	}
	if len(resp.Patch) == 0 {
		return doc
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch type %v, want JSONPatch", resp.PatchType)
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("invalid patch %s: %v", resp.Patch, err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("patch %s does not apply: %v", resp.Patch, err)
	}
	return out
}

// TestMutateCreateAppliesDefaults checks that the patch turns the benchmark's VMI into what
// Vireo's registry would store: the same defaulted spec, the finalizer and phase Pending.
func TestMutateCreateAppliesDefaults(t *testing.T) {
	a := NewAdmitter()
	doc := customResource(t, measure.VMI("ns", "obj-0"))
	out := patched(t, doc, a.Mutate(request(admissionv1.Create, doc, nil)))

	var got v1.VirtualMachineInstance
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.APIVersion != group+"/v1" || got.Name != "obj-0" || got.Labels["bench"] != "yes" {
		t.Errorf("the patch changed what defaulting does not own: %s", out)
	}
	if len(got.Finalizers) != 1 || got.Finalizers[0] != v1.VirtualMachineInstanceFinalizer {
		t.Errorf("finalizers = %v, want [%s]", got.Finalizers, v1.VirtualMachineInstanceFinalizer)
	}
	if got.Status.Phase != v1.Pending || len(got.Status.PhaseTransitionTimestamps) != 1 {
		t.Errorf("status = %+v, want phase Pending with one transition", got.Status)
	}

	// The spec must be exactly what the registry's preparation makes of the same VMI.
	internal := &v1.VirtualMachineInstance{}
	if err := a.scheme.Convert(measure.VMI("ns", "obj-0"), internal, nil); err != nil {
		t.Fatal(err)
	}
	vmiregistry.PrepareForCreate(internal)
	var want v1.VirtualMachineInstance
	if err := a.scheme.Convert(internal, &want, nil); err != nil {
		t.Fatal(err)
	}
	// The firmware UUID is random, as KubeVirt's: it must be set, not equal.
	if got.Spec.Domain.Firmware == nil || got.Spec.Domain.Firmware.UUID == "" {
		t.Fatalf("firmware uuid not set by the patch: %+v", got.Spec.Domain.Firmware)
	}
	want.Spec.Domain.Firmware.UUID = got.Spec.Domain.Firmware.UUID
	if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) {
		t.Errorf("spec after the patch:\n%+v\nwant:\n%+v", got.Spec, want.Spec)
	}
	d := got.Spec.Domain
	if d.Machine == nil || d.Machine.Type != "q35" || len(d.Devices.Disks) != 1 || d.Devices.Disks[0].Disk == nil ||
		d.Devices.Disks[0].Disk.Bus != v1.DiskBusSATA || len(got.Spec.Networks) != 1 || d.Memory == nil ||
		d.Memory.Guest.Cmp(resource.MustParse("64Mi")) != 0 || got.Spec.Volumes[0].ContainerDisk.ImagePullPolicy != v1.PullIfNotPresent {
		t.Errorf("defaults missing from %s", out)
	}

	// A second pass over the defaulted object changes nothing but the transition timestamp.
	again := a.Mutate(request(admissionv1.Create, out, nil))
	for _, op := range decodeOps(t, again.Patch) {
		if !strings.HasPrefix(op.Path, "/status/phaseTransitionTimestamps") {
			t.Errorf("defaulting is not idempotent: %+v", op)
		}
	}
}

func decodeOps(t *testing.T, patch []byte) []Operation {
	t.Helper()
	var raw []struct {
		Op, Path string
		Value    any
	}
	if len(patch) > 0 {
		if err := json.Unmarshal(patch, &raw); err != nil {
			t.Fatal(err)
		}
	}
	ops := make([]Operation, len(raw))
	for i, r := range raw {
		ops[i] = Operation{Op: r.Op, Path: r.Path, Value: r.Value}
	}
	return ops
}

func TestMutateUpdateRevertsStatus(t *testing.T) {
	a := NewAdmitter()
	old := customResource(t, measure.VMI("ns", "obj-0"))
	doc := patched(t, old, a.Mutate(request(admissionv1.Create, old, nil)))

	var vmi v1.VirtualMachineInstance
	if err := json.Unmarshal(doc, &vmi); err != nil {
		t.Fatal(err)
	}
	vmi.Labels["changed"] = "yes"
	sameStatus := customResource(t, &vmi)
	if resp := a.Mutate(request(admissionv1.Update, sameStatus, doc)); len(resp.Patch) != 0 || !resp.Allowed {
		t.Errorf("a label change was patched: %s", resp.Patch)
	}
	vmi.Status.Phase = v1.Running
	vmi.Status.NodeName = "node-1"
	out := patched(t, customResource(t, &vmi), a.Mutate(request(admissionv1.Update, customResource(t, &vmi), doc)))
	var got v1.VirtualMachineInstance
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.Pending || got.Status.NodeName != "" || got.Labels["changed"] != "yes" {
		t.Errorf("status not reverted (or the label lost): %s", out)
	}
}

func TestValidate(t *testing.T) {
	a := NewAdmitter()
	valid := customResource(t, measure.VMI("ns", "obj-0"))
	defaulted := patched(t, valid, a.Mutate(request(admissionv1.Create, valid, nil)))
	if resp := a.Validate(request(admissionv1.Create, defaulted, nil)); !resp.Allowed {
		t.Errorf("the defaulted benchmark VMI was denied: %v", resp.Result)
	}

	noMemory := measure.VMI("ns", "obj-0")
	noMemory.Spec.Domain.Resources.Requests = nil
	resp := a.Validate(request(admissionv1.Create, customResource(t, noMemory), nil))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 422 ||
		!strings.Contains(resp.Result.Message, "spec.domain.resources.requests.memory") {
		t.Errorf("a VMI without memory: allowed=%v result=%+v, want 422 naming the field", resp.Allowed, resp.Result)
	}

	var vmi v1.VirtualMachineInstance
	if err := json.Unmarshal(defaulted, &vmi); err != nil {
		t.Fatal(err)
	}
	vmi.ResourceVersion = "5" // as stored
	defaulted = customResource(t, &vmi)
	vmi.Labels["changed"] = "yes"
	if resp := a.Validate(request(admissionv1.Update, customResource(t, &vmi), defaulted)); !resp.Allowed {
		t.Errorf("a label change was denied: %v", resp.Result)
	}
	vmi.Spec.Domain.Machine.Type = "pc-q35-9.0"
	resp = a.Validate(request(admissionv1.Update, customResource(t, &vmi), defaulted))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "spec is immutable") {
		t.Errorf("a spec change: allowed=%v result=%+v, want denied naming the field", resp.Allowed, resp.Result)
	}
}

// KubeVirt's own controller writes status and the reserved labels through updates; users may not.
func TestComponentWritesStatusAndReservedLabels(t *testing.T) {
	a := NewAdmitter()
	created := customResource(t, measure.VMI("ns", "obj-0"))
	old := patched(t, created, a.Mutate(request(admissionv1.Create, created, nil)))
	var vmi v1.VirtualMachineInstance
	if err := json.Unmarshal(old, &vmi); err != nil {
		t.Fatal(err)
	}
	vmi.ResourceVersion = "5" // as stored
	old = customResource(t, &vmi)
	vmi.Labels[v1.NodeNameLabel] = "node-1"
	vmi.Status.Phase, vmi.Status.NodeName = v1.Running, "node-1"
	update := customResource(t, &vmi)
	for user, wantKept := range map[string]bool{ComponentUser: true, "alice": false} {
		req := request(admissionv1.Update, update, old)
		req.UserInfo.Username = user
		if resp := a.Mutate(req); (len(resp.Patch) == 0) != wantKept {
			t.Errorf("%s: status patch %s, want the status kept: %v", user, resp.Patch, wantKept)
		}
		if resp := a.Validate(req); resp.Allowed != wantKept {
			t.Errorf("%s: adding %s allowed=%v (%v), want %v", user, v1.NodeNameLabel, resp.Allowed, resp.Result, wantKept)
		}
	}
}
