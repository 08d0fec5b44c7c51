package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
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
