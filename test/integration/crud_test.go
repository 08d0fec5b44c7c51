package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestCreateAppliesDefaults(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	created, err := vmis.Create(ctx, newVMI("defaults"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := vmis.Get(ctx, "defaults", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("get returned uid/rv %s/%s, create %s/%s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
	}
	spec := got.Spec
	if spec.Domain.Machine == nil || spec.Domain.Machine.Type != "q35" {
		t.Errorf("machine type not defaulted to q35: %+v", spec.Domain.Machine)
	}
	if len(spec.Domain.Devices.Disks) != 1 || spec.Domain.Devices.Disks[0].Name != "root" ||
		spec.Domain.Devices.Disks[0].Disk == nil || spec.Domain.Devices.Disks[0].Disk.Bus != v1.DiskBusSATA {
		t.Errorf("disk for volume root not defaulted to a sata disk: %+v", spec.Domain.Devices.Disks)
	}
	if len(spec.Networks) != 1 || spec.Networks[0].Name != "default" || spec.Networks[0].Pod == nil {
		t.Errorf("pod network not defaulted: %+v", spec.Networks)
	}
	if len(spec.Domain.Devices.Interfaces) != 1 || spec.Domain.Devices.Interfaces[0].Masquerade == nil {
		t.Errorf("masquerade interface not defaulted: %+v", spec.Domain.Devices.Interfaces)
	}
	if spec.TerminationGracePeriodSeconds != nil {
		t.Errorf("terminationGracePeriodSeconds = %d, want it left unset as KubeVirt does", *spec.TerminationGracePeriodSeconds)
	}
	if spec.Domain.Memory == nil || spec.Domain.Memory.Guest == nil || spec.Domain.Memory.Guest.String() != "64Mi" {
		t.Errorf("memory.guest not taken from requests: %+v", spec.Domain.Memory)
	}
	if spec.Domain.Firmware == nil || spec.Domain.Firmware.UUID == "" {
		t.Errorf("firmware uuid not defaulted: %+v", spec.Domain.Firmware)
	}
	if got.Status.Phase != v1.Pending || len(got.Status.PhaseTransitionTimestamps) != 1 {
		t.Errorf("status not Pending with one transition: %+v", got.Status)
	}
	if !containsString(got.Finalizers, "foregroundDeleteVirtualMachine") {
		t.Errorf("finalizer missing: %v", got.Finalizers)
	}
	if got.Generation != 1 {
		t.Errorf("generation %d, want 1", got.Generation)
	}
}

func TestListAndWatchInOrderAndResume(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	list, err := vmis.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := vmis.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	names := []string{"w-a", "w-b", "w-c"}
	var rvs []string
	for _, n := range names {
		vmi, err := vmis.Create(ctx, newVMI(n), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
		rvs = append(rvs, vmi.ResourceVersion)
	}
	for i, n := range names {
		ev := nextEvent(t, w)
		vmi := ev.Object.(*v1.VirtualMachineInstance)
		if ev.Type != watch.Added || vmi.Name != n {
			t.Fatalf("event %d: got %s %s, want ADDED %s", i, ev.Type, vmi.Name, n)
		}
	}
	w.Stop()

	// Resuming from the first object's resourceVersion replays only what came after it.
	w2, err := vmis.Watch(ctx, metav1.ListOptions{ResourceVersion: rvs[0]})
	if err != nil {
		t.Fatalf("resume watch: %v", err)
	}
	defer w2.Stop()
	for _, n := range names[1:] {
		if vmi := nextEvent(t, w2).Object.(*v1.VirtualMachineInstance); vmi.Name != n {
			t.Fatalf("resumed watch: got %s, want %s", vmi.Name, n)
		}
	}
	list, err = vmis.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("list: %d items, err %v; want 3", len(list.Items), err)
	}
}

func TestUpdateConflictAndMergePatch(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	vmi, err := vmis.Create(ctx, newVMI("upd"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	first := vmi.DeepCopy()
	first.Labels = map[string]string{"tier": "one"}
	if _, err := vmis.Update(ctx, first, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("first update: %v", err)
	}
	stale := vmi.DeepCopy()
	stale.Labels = map[string]string{"tier": "two"}
	_, err = vmis.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: got %v, want a conflict", err)
	}

	patched, err := vmis.Patch(ctx, "upd", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"patched","extra":"yes"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if patched.Labels["tier"] != "patched" || patched.Labels["extra"] != "yes" {
		t.Errorf("labels after merge patch: %v", patched.Labels)
	}
	if patched.Generation != 1 {
		t.Errorf("metadata-only patch changed generation to %d", patched.Generation)
	}
}

func TestSpecIsImmutable(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	if _, err := vmis.Create(ctx, newVMI("immutable"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	_, err := vmis.Patch(ctx, "immutable", types.MergePatchType, []byte(`{"spec":{"hostname":"other"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec") {
		t.Fatalf("changing a VMI's spec: got %v, want Invalid naming spec", err)
	}
}

func TestFinalizerHoldsDeletion(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	if _, err := vmis.Create(ctx, newVMI("fin"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := vmis.Delete(ctx, "fin", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	held, err := vmis.Get(ctx, "fin", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after delete: %v (the finalizer must hold the object)", err)
	}
	if held.DeletionTimestamp == nil {
		t.Fatalf("deletionTimestamp not set")
	}
	held.Finalizers = nil
	if _, err := vmis.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	if _, err := vmis.Get(ctx, "fin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after releasing the finalizer: got %v, want NotFound", err)
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
