// Package datavolume is the registry of CDI DataVolumes: validation, status
// separation and kubectl columns.
package datavolume

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/apis/cdi/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes DataVolumes to the generic registry; clones checks the users who clone
// across namespaces.
func Resource(clones CloneSources) storeutil.Resource[*cdiv1beta1.DataVolume] {
	return storeutil.Resource[*cdiv1beta1.DataVolume]{
		Plural:     cdiv1beta1.Resource("datavolumes"),
		Singular:   cdiv1beta1.Resource("datavolume"),
		ShortNames: []string{"dv", "dvs"},
		New:        func() runtime.Object { return &cdiv1beta1.DataVolume{} },
		NewList:    func() runtime.Object { return &cdiv1beta1.DataVolumeList{} },
		Hooks: storeutil.Hooks[*cdiv1beta1.DataVolume]{
			APIVersion: cdiv1beta1.SchemeGroupVersion.String(),
			Validate: func(ctx context.Context, o *cdiv1beta1.DataVolume) field.ErrorList {
				errs := validation.ValidateDataVolume(o)
				if len(errs) == 0 {
					errs = clones.Check(ctx, o.Namespace, &o.Spec, field.NewPath("spec"))
				}
				return errs
			},
			ValidateStatusUpdate: func(_ context.Context, o, old *cdiv1beta1.DataVolume) field.ErrorList {
				return validation.ValidateDataVolumeStatusUpdate(o, old)
			},
			ValidateUpdate: func(_ context.Context, o, old *cdiv1beta1.DataVolume) field.ErrorList {
				return validation.ValidateDataVolumeUpdate(o, old)
			},
			ResetStatus: func(o *cdiv1beta1.DataVolume) { o.Status = cdiv1beta1.DataVolumeStatus{} },
			CopyStatus:  func(dst, src *cdiv1beta1.DataVolume) { dst.Status = src.Status },
			CopySpec:    func(dst, src *cdiv1beta1.DataVolume) { dst.Spec = src.Spec },
			Spec:        func(o *cdiv1beta1.DataVolume) any { return o.Spec },
		},
		SelectableFields: cdiv1beta1.DataVolumeFields,
		Table: storeutil.Table[*cdiv1beta1.DataVolume]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.Column("Phase", "Phase of the import.", 0),
				storeutil.Column("Progress", "Import progress in percent.", 0),
				{Name: "Restarts", Type: "integer", Description: "Restarts of the importer."},
				storeutil.AgeColumn,
			},
			Cells: func(o *cdiv1beta1.DataVolume, age string) []any {
				return []any{storeutil.OrNil(string(o.Status.Phase)), storeutil.OrNil(string(o.Status.Progress)), int64(o.Status.RestartCount), age}
			},
		},
	}
}
