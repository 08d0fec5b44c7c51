package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
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

	// The server derives KubeVirt's kubevirt.io/nodeName label from status.nodeName, and a
	// client dropping it (kubectl replace of the original manifest) cannot remove it.
	if got.Labels[v1.NodeNameLabel] != "node-1" {
		t.Fatalf("labels after status names node-1: %v, want %s=node-1", got.Labels, v1.NodeNameLabel)
	}
	replaced := got.DeepCopy()
	replaced.Labels = nil
	if replaced, err = vmis.Update(ctx, replaced, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update without labels: %v", err)
	}
	if replaced.Labels[v1.NodeNameLabel] != "node-1" {
		t.Fatalf("labels after an update without them: %v, want %s=node-1 kept", replaced.Labels, v1.NodeNameLabel)
	}
	list, err := vmis.List(ctx, metav1.ListOptions{LabelSelector: v1.NodeNameLabel + "=node-1"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "sep" {
		t.Fatalf("list -l %s=node-1: %v, %v; want sep", v1.NodeNameLabel, names(list), err)
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

func TestStatusSubresourcesOfEveryKind(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	dvs := server.Client.CdiV1beta1().DataVolumes(ns)
	dv := &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "dv"},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{Blank: &cdiv1beta1.DataVolumeBlankImage{}},
			Storage: &cdiv1beta1.StorageSpec{Resources: cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{"storage": mustQuantity("1Gi")}}},
		},
	}
	created, err := dvs.Create(ctx, dv, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create dv: %v", err)
	}
	created.Status.Phase = cdiv1beta1.Succeeded
	created.Status.Progress = "100.0%"
	created.Spec.ContentType = cdiv1beta1.DataVolumeArchive
	got, err := dvs.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("dv status: %v", err)
	}
	if got.Status.Phase != cdiv1beta1.Succeeded || got.Status.Progress != "100.0%" || got.Spec.ContentType != "" {
		t.Errorf("dv after status update: phase %q progress %q contentType %q", got.Status.Phase, got.Status.Progress, got.Spec.ContentType)
	}

	vmims := server.Client.KubevirtV1().VirtualMachineInstanceMigrations(ns)
	w, err := vmims.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.vmiName=target"})
	if err != nil {
		t.Fatalf("watch migrations by spec.vmiName: %v", err)
	}
	defer w.Stop()
	for _, vmi := range []string{"other", "target"} {
		if _, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, newVMI(vmi), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "to-" + vmi}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi}}
		if _, err := vmims.Create(ctx, m, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if ev := nextEvent(t, w); ev.Object.(*v1.VirtualMachineInstanceMigration).Name != "to-target" {
		t.Fatalf("watch spec.vmiName=target delivered %s", ev.Object.(*v1.VirtualMachineInstanceMigration).Name)
	}
	m, err := vmims.Get(ctx, "to-target", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.Status.Phase = v1.MigrationRunning
	m.Spec.VMIName = "changed"
	got2, err := vmims.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("vmim status: %v", err)
	}
	if got2.Status.Phase != v1.MigrationRunning || got2.Spec.VMIName != "target" {
		t.Errorf("vmim after status update: phase %q vmiName %q", got2.Status.Phase, got2.Spec.VMIName)
	}
}
