package migration

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
)

func migration(name string, deleted bool) *v1.VirtualMachineInstanceMigration {
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns",
		Finalizers: []string{v1.VirtualMachineInstanceMigrationFinalizer, "other.example/keep"},
	}}
	if deleted {
		now := metav1.Now()
		m.DeletionTimestamp = &now
	}
	return m
}

func TestDeletedMigrationReleasesOnlyItsFinalizer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	vireo := vireofake.NewClientset(migration("deleted", true), migration("live", false))
	vf := vireoinformers.NewSharedInformerFactory(vireo, 0)
	ctrl, err := New(vireo, vf.Kubevirt().V1().VirtualMachineInstanceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	vf.Start(ctx.Done())
	go func() { _ = ctrl.Run(ctx, 1) }()

	finalizers := func(name string) []string {
		m, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m.Finalizers
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return !slices.Contains(finalizers("deleted"), v1.VirtualMachineInstanceMigrationFinalizer), nil
	})
	if err != nil {
		t.Fatalf("finalizer of the deleted migration was not released: %v", finalizers("deleted"))
	}
	if got := finalizers("deleted"); !slices.Equal(got, []string{"other.example/keep"}) {
		t.Errorf("deleted migration's finalizers = %v, want only the foreign one kept", got)
	}
	if got := finalizers("live"); !slices.Contains(got, v1.VirtualMachineInstanceMigrationFinalizer) {
		t.Errorf("a migration that is not deleted lost its finalizer: %v", got)
	}
}
