package storeutil

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vireo-dev/vireo/apis/core"
)

func testHooks() Hooks[*core.VirtualMachineInstanceMigration] {
	return Hooks[*core.VirtualMachineInstanceMigration]{
		ResetStatus: func(o *core.VirtualMachineInstanceMigration) { o.Status = core.VirtualMachineInstanceMigrationStatus{} },
		CopyStatus:  func(dst, src *core.VirtualMachineInstanceMigration) { dst.Status = src.Status },
		CopySpec:    func(dst, src *core.VirtualMachineInstanceMigration) { dst.Spec = src.Spec },
		Spec:        func(o *core.VirtualMachineInstanceMigration) any { return o.Spec },
	}
}

func migration(vmi string, phase core.VirtualMachineInstanceMigrationPhase) *core.VirtualMachineInstanceMigration {
	return &core.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"a": "1"}, Generation: 3},
		Spec:       core.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
		Status:     core.VirtualMachineInstanceMigrationStatus{Phase: phase},
	}
}

func TestStrategyKeepsStatusOutOfMainWrites(t *testing.T) {
	s := NewStrategy(runtime.NewScheme(), testHooks())
	ctx := context.Background()

	created := migration("vmi", core.MigrationRunning)
	s.PrepareForCreate(ctx, created)
	if created.Status.Phase != "" || created.Generation != 1 {
		t.Errorf("create: phase %q generation %d, want status cleared and generation 1", created.Status.Phase, created.Generation)
	}

	old := migration("vmi", core.MigrationRunning)
	labelsOnly := migration("vmi", core.MigrationFailed)
	labelsOnly.Labels["b"] = "2"
	s.PrepareForUpdate(ctx, labelsOnly, old)
	if labelsOnly.Status.Phase != core.MigrationRunning || labelsOnly.Generation != 3 {
		t.Errorf("metadata update: phase %q generation %d, want stored status and generation 3", labelsOnly.Status.Phase, labelsOnly.Generation)
	}

	specChange := migration("other", core.MigrationRunning)
	s.PrepareForUpdate(ctx, specChange, old)
	if specChange.Generation != 4 {
		t.Errorf("spec update: generation %d, want 4", specChange.Generation)
	}
}

func TestStatusStrategyKeepsSpecAndMetadata(t *testing.T) {
	s := NewStatusStrategy(NewStrategy(runtime.NewScheme(), testHooks()))
	old := migration("vmi", core.MigrationPending)
	upd := migration("changed", core.MigrationSucceeded)
	upd.Labels = map[string]string{"x": "y"}
	upd.Finalizers = []string{"sneaky"}
	upd.Generation = 9
	s.PrepareForUpdate(context.Background(), upd, old)
	if upd.Status.Phase != core.MigrationSucceeded {
		t.Errorf("status not kept: %q", upd.Status.Phase)
	}
	if upd.Spec.VMIName != "vmi" || upd.Labels["a"] != "1" || len(upd.Finalizers) != 0 || upd.Generation != 3 {
		t.Errorf("status update changed spec/metadata: vmiName %q labels %v finalizers %v generation %d",
			upd.Spec.VMIName, upd.Labels, upd.Finalizers, upd.Generation)
	}
}

func TestTableRendersListsAndHeaders(t *testing.T) {
	table := Table[*core.VirtualMachineInstanceMigration]{
		Columns: []metav1.TableColumnDefinition{Column("Phase", "", 0), Column("VMI", "", 0)},
		Cells: func(o *core.VirtualMachineInstanceMigration, _ string) []any {
			return []any{OrNil(string(o.Status.Phase)), OrNil(o.Spec.VMIName)}
		},
	}
	list := &core.VirtualMachineInstanceMigrationList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42"},
		Items:    []core.VirtualMachineInstanceMigration{*migration("a", core.MigrationRunning), *migration("", "")},
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
