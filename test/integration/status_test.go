package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestStatusIsSeparateFromSpec(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	vmi := newVMI("sep")
	vmi.Status.Phase = v1.Running // ignored on create
	created, err := vmis.Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Status.Phase != v1.Pending {
		t.Fatalf("status written through create: phase %q", created.Status.Phase)
	}

	// A main-resource update keeps the stored status.
	upd := created.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	upd.Status.NodeName = "sneaky"
	after, err := vmis.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if after.Status.NodeName != "" || after.Labels["a"] != "b" {
		t.Fatalf("main update: nodeName %q labels %v; want status untouched and label set", after.Status.NodeName, after.Labels)
	}

	// A /status update changes status but neither spec nor labels.
	st := after.DeepCopy()
	st.Status.Phase = v1.Scheduled
	st.Status.NodeName = "node-1"
	st.Spec.Hostname = "ignored"
	st.Labels = map[string]string{"a": "changed"}
	got, err := vmis.UpdateStatus(ctx, st, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if got.Status.Phase != v1.Scheduled || got.Status.NodeName != "node-1" {
		t.Fatalf("status not written: %+v", got.Status)
	}
	if got.Spec.Hostname != "" || got.Labels["a"] != "b" {
		t.Fatalf("status update changed spec.hostname=%q labels=%v", got.Spec.Hostname, got.Labels)
	}
}

func TestFieldSelectors(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	w, err := vmis.Watch(ctx, metav1.ListOptions{FieldSelector: "status.nodeName=node-a"})
	if err != nil {
		t.Fatalf("watch with field selector: %v", err)
	}
	defer w.Stop()
	for _, n := range []string{"on-a", "on-b"} {
		vmi, err := vmis.Create(ctx, newVMI(n), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		vmi.Status.NodeName = "node-" + n[len(n)-1:]
		vmi.Status.Phase = v1.Scheduled
		if _, err := vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status: %v", err)
		}
	}
	// Moving onto node-a shows up as ADDED for a watcher of node-a.
	ev := nextEvent(t, w)
	if got := ev.Object.(*v1.VirtualMachineInstance); ev.Type != watch.Added || got.Name != "on-a" {
		t.Fatalf("watch status.nodeName=node-a: got %s %s, want ADDED on-a", ev.Type, got.Name)
	}

	list, err := vmis.List(ctx, metav1.ListOptions{FieldSelector: "status.nodeName=node-b"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "on-b" {
		t.Fatalf("list status.nodeName=node-b: %v items, err %v", names(list), err)
	}
	sel := fields.AndSelectors(fields.OneTermEqualSelector("status.phase", "Scheduled"), fields.OneTermNotEqualSelector("metadata.name", "on-a"))
	list, err = vmis.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "on-b" {
		t.Fatalf("list %s: %v, err %v", sel, names(list), err)
	}
	if _, err := vmis.List(ctx, metav1.ListOptions{FieldSelector: "spec.hostname=x"}); err == nil {
		t.Fatalf("an unsupported field selector was accepted")
	}

	vmims := server.Client.KubevirtV1().VirtualMachineInstanceMigrations(ns)
	for _, target := range []string{"on-a", "on-b"} {
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "mig-" + target}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: target}}
		if _, err := vmims.Create(ctx, m, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create migration: %v", err)
		}
	}
	ml, err := vmims.List(ctx, metav1.ListOptions{FieldSelector: "spec.vmiName=on-b"})
	if err != nil || len(ml.Items) != 1 || ml.Items[0].Name != "mig-on-b" {
		t.Fatalf("list migrations spec.vmiName=on-b: %+v, err %v", ml, err)
	}
}

func names(l *v1.VirtualMachineInstanceList) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, i := range l.Items {
		out = append(out, i.Name)
	}
	return out
}
