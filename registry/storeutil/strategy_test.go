package storeutil

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func testHooks() Hooks[*v1.VirtualMachineInstanceMigration] {
	return Hooks[*v1.VirtualMachineInstanceMigration]{
		ResetStatus: func(o *v1.VirtualMachineInstanceMigration) { o.Status = v1.VirtualMachineInstanceMigrationStatus{} },
		CopyStatus:  func(dst, src *v1.VirtualMachineInstanceMigration) { dst.Status = src.Status },
		CopySpec:    func(dst, src *v1.VirtualMachineInstanceMigration) { dst.Spec = src.Spec },
		Spec:        func(o *v1.VirtualMachineInstanceMigration) any { return o.Spec },
	}
}

func migration(vmi string, phase v1.VirtualMachineInstanceMigrationPhase) *v1.VirtualMachineInstanceMigration {
	return &v1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"a": "1"}, Generation: 3},
		Spec:       v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
		Status:     v1.VirtualMachineInstanceMigrationStatus{Phase: phase},
	}
}

func TestStrategyKeepsStatusOutOfMainWrites(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), testHooks())
	ctx := context.Background()

	created := migration("vmi", v1.MigrationRunning)
	s.PrepareForCreate(ctx, created)
	if created.Status.Phase != "" || created.Generation != 1 {
		t.Errorf("create: phase %q generation %d, want status cleared and generation 1", created.Status.Phase, created.Generation)
	}

	old := migration("vmi", v1.MigrationRunning)
	labelsOnly := migration("vmi", v1.MigrationFailed)
	labelsOnly.Labels["b"] = "2"
	s.PrepareForUpdate(ctx, labelsOnly, old)
	if labelsOnly.Status.Phase != v1.MigrationRunning || labelsOnly.Generation != 3 {
		t.Errorf("metadata update: phase %q generation %d, want stored status and generation 3", labelsOnly.Status.Phase, labelsOnly.Generation)
	}

	specChange := migration("other", v1.MigrationRunning)
	s.PrepareForUpdate(ctx, specChange, old)
	if specChange.Generation != 4 {
		t.Errorf("spec update: generation %d, want 4", specChange.Generation)
	}
}

func TestStatusStrategyKeepsSpecAndMetadata(t *testing.T) {
	s := NewStatusStrategy(NewStrategy(runtime.NewScheme(), testHooks()))
	old := migration("vmi", v1.MigrationPending)
	upd := migration("changed", v1.MigrationSucceeded)
	upd.Labels = map[string]string{"x": "y"}
	upd.Finalizers = []string{"sneaky"}
	upd.Generation = 9
	s.PrepareForUpdate(context.Background(), upd, old)
	if upd.Status.Phase != v1.MigrationSucceeded {
		t.Errorf("status not kept: %q", upd.Status.Phase)
	}
	if upd.Spec.VMIName != "vmi" || upd.Labels["a"] != "1" || len(upd.Finalizers) != 0 || upd.Generation != 3 {
		t.Errorf("status update changed spec/metadata: vmiName %q labels %v finalizers %v generation %d",
			upd.Spec.VMIName, upd.Labels, upd.Finalizers, upd.Generation)
	}
}

func TestTableRendersListsAndHeaders(t *testing.T) {
	table := Table[*v1.VirtualMachineInstanceMigration]{
		Columns: []metav1.TableColumnDefinition{Column("Phase", "", 0), Column("VMI", "", 0)},
		Cells: func(o *v1.VirtualMachineInstanceMigration, _ string) []any {
			return []any{OrNil(string(o.Status.Phase)), OrNil(o.Spec.VMIName)}
		},
	}
	list := &v1.VirtualMachineInstanceMigrationList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42"},
		Items:    []v1.VirtualMachineInstanceMigration{*migration("a", v1.MigrationRunning), *migration("", "")},
	}
	got, err := table.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ColumnDefinitions) != 3 || got.ColumnDefinitions[0].Name != "Name" || got.ResourceVersion != "42" {
		t.Fatalf("table header %+v rv %q", got.ColumnDefinitions, got.ResourceVersion)
	}
	if len(got.Rows) != 2 || got.Rows[0].Cells[1] != "Running" || got.Rows[1].Cells[1] != nil || got.Rows[1].Cells[2] != nil {
		t.Fatalf("rows %+v: want Running then empty cells as nil", got.Rows)
	}
	noHeaders, _ := table.ConvertToTable(context.Background(), list, &metav1.TableOptions{NoHeaders: true})
	if len(noHeaders.ColumnDefinitions) != 0 {
		t.Errorf("NoHeaders still returned columns")
	}
}
