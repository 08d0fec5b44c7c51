package ownership

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestMayAdopt: the owner adopts only when the API server still has it, with the same UID and
// not being deleted, whatever the cached copy says.
func TestMayAdopt(t *testing.T) {
	cached := &metav1.ObjectMeta{Name: "pool", UID: "a"}
	deleting := &metav1.ObjectMeta{Name: "pool", UID: "a", DeletionTimestamp: &metav1.Time{}}
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "pools"}, "pool")
	for _, tc := range []struct {
		name    string
		fresh   metav1.Object
		err     error
		want    bool
		wantErr bool
	}{
		{name: "unchanged", fresh: cached, want: true},
		{name: "being deleted", fresh: deleting},
		{name: "replaced", fresh: &metav1.ObjectMeta{Name: "pool", UID: "b"}},
		{name: "gone", err: gone},
		{name: "unreadable", err: errors.New("connection refused"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MayAdopt(t.Context(), cached, func(context.Context) (metav1.Object, error) { return tc.fresh, tc.err })
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("MayAdopt = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
