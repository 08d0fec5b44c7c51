package integration

import (
	"context"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// TestUpdateWithTheOriginalManifestIsANoOp is what a second `kubectl apply` of an unchanged VMI
// manifest does: it sends the user's spec without the server's defaults. The update must be
// defaulted like a create (keeping the firmware UUID the server chose) and compare equal.
func TestUpdateWithTheOriginalManifestIsANoOp(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	created, err := vmis.Create(ctx, newVMI("reapply"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again := newVMI("reapply")
	again.ResourceVersion = created.ResourceVersion
	again.Finalizers = created.Finalizers
	updated, err := vmis.Update(ctx, again, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating a VMI with its original, undefaulted spec: %v", err)
	}
	if updated.Generation != created.Generation || updated.Spec.Domain.Firmware.UUID != created.Spec.Domain.Firmware.UUID {
		t.Errorf("generation %d -> %d, uuid %s -> %s: want both unchanged",
			created.Generation, updated.Generation, created.Spec.Domain.Firmware.UUID, updated.Spec.Domain.Firmware.UUID)
	}
	// A real change is still refused.
	changed := newVMI("reapply")
	changed.Spec.Hostname = "other"
	changed.ResourceVersion = updated.ResourceVersion
	if _, err := vmis.Update(ctx, changed, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("changing the spec of a VMI: got %v, want Invalid", err)
	}
}

// warningRecorder collects the API warnings a client receives.
type warningRecorder struct {
	mu       sync.Mutex
	messages []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, message)
}

func (w *warningRecorder) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.messages, "\n")
}

func TestVMRunningIsKeptAsWrittenWithADeprecationWarning(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	cfg := rest.CopyConfig(server.Config)
	warnings := &warningRecorder{}
	cfg.WarningHandler = warnings
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vms := client.KubevirtV1().VirtualMachines(ns)
	running := false
	vm := &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec: v1.VirtualMachineSpec{Running: &running, Template: &v1.VirtualMachineInstanceTemplateSpec{
			Spec: newVMI("x").Spec,
		}},
	}
	created, err := vms.Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create with running: false: %v", err)
	}
	if created.Spec.Running == nil || *created.Spec.Running || created.Spec.RunStrategy != nil {
		t.Errorf("stored running/runStrategy = %v/%v, want false/unset as written", created.Spec.Running, created.Spec.RunStrategy)
	}
	if !strings.Contains(warnings.all(), "spec.running is deprecated") {
		t.Errorf("create warnings = %q, want KubeVirt's deprecation warning", warnings.all())
	}
	patched, err := vms.Patch(ctx, "legacy", types.MergePatchType, []byte(`{"spec":{"running":true}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch running: true: %v", err)
	}
	if patched.Spec.Running == nil || !*patched.Spec.Running {
		t.Errorf("running after patch = %v, want true", patched.Spec.Running)
	}
	if uuid := patched.Spec.Template.Spec.Domain.Firmware.UUID; uuid == "" || uuid != created.Spec.Template.Spec.Domain.Firmware.UUID {
		t.Errorf("firmware uuid %q after patch, want the one chosen at creation %q", uuid, created.Spec.Template.Spec.Domain.Firmware.UUID)
	}

	neither := vm.DeepCopy()
	neither.Name, neither.Spec.Running = "neither", nil
	_, err = vms.Create(ctx, neither, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec.runStrategy") {
		t.Errorf("a VM with neither running nor runStrategy: got %v, want Invalid at spec.runStrategy", err)
	}
	both := vm.DeepCopy()
	both.Name = "both"
	always := v1.RunStrategyAlways
	both.Spec.RunStrategy = &always
	_, err = vms.Create(ctx, both, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec.running") {
		t.Errorf("a VM with running and runStrategy: got %v, want Invalid at spec.running", err)
	}
}

func TestMigrationAdmission(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	kv := server.Client.KubevirtV1()
	migration := func(name, vmi string) *v1.VirtualMachineInstanceMigration {
		return &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi}}
	}
	_, err := kv.VirtualMachineInstanceMigrations(ns).Create(ctx, migration("nothing", "missing"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec.vmiName") {
		t.Errorf("migrating a VMI that does not exist: got %v, want Invalid at spec.vmiName", err)
	}
	if _, err := kv.VirtualMachineInstances(ns).Create(ctx, newVMI("mig"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := kv.VirtualMachineInstanceMigrations(ns).Create(ctx, migration("first", "mig"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("first migration: %v", err)
	}
	if first.Labels[v1.MigrationSelectorLabel] != "mig" || !containsString(first.Finalizers, v1.VirtualMachineInstanceMigrationFinalizer) {
		t.Errorf("migration labels %v finalizers %v: want kubevirt.io/vmi-name=mig and KubeVirt's finalizer", first.Labels, first.Finalizers)
	}
	// Removing the kubevirt.io/vmi-name label does not hide the migration in flight.
	first, err = kv.VirtualMachineInstanceMigrations(ns).Patch(ctx, "first", types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/metadata/labels/kubevirt.io~1vmi-name"}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.VirtualMachineInstanceMigrations(ns).Create(ctx, migration("second", "mig"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "in flight") {
		t.Errorf("a second migration while one is in flight: got %v, want Invalid naming the in-flight one", err)
	}
	first.Status.Phase = v1.MigrationFailed
	if _, err := kv.VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.VirtualMachineInstanceMigrations(ns).Create(ctx, migration("second", "mig"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a migration after the previous one failed: %v", err)
	}
}

func TestStatusWritesOfEveryKindAreValidated(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	kv := server.Client.KubevirtV1()
	always := v1.RunStrategyAlways
	vm, err := kv.VirtualMachines(ns).Create(ctx, &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "st"},
		Spec:       v1.VirtualMachineSpec{RunStrategy: &always, Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: newVMI("x").Spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm.Status.PrintableStatus = "Sleeping"
	vm.Status.Conditions = []v1.VirtualMachineCondition{{Type: "Ready", Status: "True"}, {Type: "Ready", Status: "False"}}
	_, err = kv.VirtualMachines(ns).UpdateStatus(ctx, vm, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "status.printableStatus") || !hasCause(err, "status.conditions[1].type") {
		t.Errorf("VM status with an unknown printableStatus and a duplicate condition: got %v, want Invalid naming both", err)
	}
}
