// Package datavolume is the registry of CDI DataVolumes: validation, status
// separation and kubectl columns.
package datavolume

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/cdi"
	"github.com/vireo-dev/vireo/apis/cdi/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes DataVolumes to the generic registry.
func Resource() storeutil.Resource[*cdi.DataVolume] {
	return storeutil.Resource[*cdi.DataVolume]{
		Plural:     cdi.Resource("datavolumes"),
		Singular:   cdi.Resource("datavolume"),
		ShortNames: []string{"dv", "dvs"},
		New:        func() runtime.Object { return &cdi.DataVolume{} },
		NewList:    func() runtime.Object { return &cdi.DataVolumeList{} },
		Hooks: storeutil.Hooks[*cdi.DataVolume]{
			APIVersion: "cdi.kubevirt.io/v1beta1",
			Validate: func(_ context.Context, o *cdi.DataVolume) field.ErrorList {
				return validation.ValidateDataVolume(o)
			},
			ValidateUpdate: func(_ context.Context, o, old *cdi.DataVolume) field.ErrorList {
				return validation.ValidateDataVolumeUpdate(o, old)
			},
			ResetStatus: func(o *cdi.DataVolume) { o.Status = cdi.DataVolumeStatus{} },
			CopyStatus:  func(dst, src *cdi.DataVolume) { dst.Status = src.Status },
			CopySpec:    func(dst, src *cdi.DataVolume) { dst.Spec = src.Spec },
			Spec:        func(o *cdi.DataVolume) any { return o.Spec },
		},
		SelectableFields: func(o *cdi.DataVolume) fields.Set {
			return fields.Set{"status.phase": string(o.Status.Phase)}
		},
		Table: storeutil.Table[*cdi.DataVolume]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.Column("Phase", "Phase of the import.", 0),
				storeutil.Column("Progress", "Import progress in percent.", 0),
				{Name: "Restarts", Type: "integer", Description: "Restarts of the importer."},
				storeutil.AgeColumn,
			},
			Cells: func(o *cdi.DataVolume, age string) []any {
				return []any{storeutil.OrNil(string(o.Status.Phase)), storeutil.OrNil(string(o.Status.Progress)), int64(o.Status.RestartCount), age}
			},
		},
	}
}
