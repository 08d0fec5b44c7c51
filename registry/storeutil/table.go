package storeutil

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Table converts a resource to kubectl's server-side table with fixed columns.
type Table[T Object] struct {
	// Columns follow the implicit Name column, in order.
	Columns []metav1.TableColumnDefinition
	// Cells returns one cell per column for obj; age is its human-readable age.
	Cells func(obj T, age string) []any
}

// ConvertToTable renders an object or a list of them.
func (t Table[T]) ConvertToTable(_ context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	rows, err := metatable.MetaToTableRow(obj, func(o runtime.Object, _ metav1.Object, name, age string) ([]any, error) {
		return append([]any{name}, t.Cells(o.(T), age)...), nil
	})
	if err != nil {
		return nil, err
	}
	table.Rows = rows
	if l, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion = l.GetResourceVersion()
		table.Continue = l.GetContinue()
		table.RemainingItemCount = l.GetRemainingItemCount()
	} else if c, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = c.GetResourceVersion()
	}
	if o, ok := opts.(*metav1.TableOptions); !ok || !o.NoHeaders {
		name := metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name of the object, unique in its namespace."}
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition{name}, t.Columns...)
	}
	return table, nil
}

// AgeColumn is the AGE column every kind but migrations shows.
var AgeColumn = metav1.TableColumnDefinition{Name: "Age", Type: "date", Description: "Time since the object was created."}

// Column is a string column; priority 1 shows only with -o wide.
func Column(name, description string, priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: description, Priority: priority}
}

// IntegerColumn is an integer column, such as a replica count.
func IntegerColumn(name, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "integer", Description: description}
}

// OrNil turns an empty string into a missing cell, as CRD printer columns show absent values.
func OrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
