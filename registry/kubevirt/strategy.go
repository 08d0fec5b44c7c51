// Package kubevirt is the registry of KubeVirt settings objects: one per installation, in
// vireo-system, stored as written (effective values come from defaults.KubeVirtSettingsOf),
// validated with field paths, Deployed as soon as they are stored, with KubeVirt's columns.
package kubevirt

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// ReasonServed is the reason of the Available condition vireo-apiserver gives a KubeVirt object
// it stores: the API the object configures is served (it was created through it).
const ReasonServed = "APIServed"

// Resource describes KubeVirt objects to the generic registry. others lets creation refuse a
// second object; its Store is filled in once the store exists.
func Resource(others *Singleton) storeutil.Resource[*v1.KubeVirt] {
	return storeutil.Resource[*v1.KubeVirt]{
		Plural:     v1.Resource("kubevirts"),
		Singular:   v1.Resource("kubevirt"),
		ShortNames: []string{"kv", "kvs"},
		New:        func() runtime.Object { return &v1.KubeVirt{} },
		NewList:    func() runtime.Object { return &v1.KubeVirtList{} },
		Hooks: storeutil.Hooks[*v1.KubeVirt]{
			APIVersion:       v1.SchemeGroupVersion.String(),
			PrepareForCreate: func(_ context.Context, o *v1.KubeVirt) { o.Status = DeployedStatus(metav1.Now()) },
			Validate: func(ctx context.Context, o *v1.KubeVirt) field.ErrorList {
				if errs := validation.ValidateKubeVirt(o); len(errs) > 0 {
					return errs
				}
				return others.check(ctx, o)
			},
			ValidateUpdate: func(_ context.Context, o, old *v1.KubeVirt) field.ErrorList {
				return validation.ValidateKubeVirtUpdate(o, old)
			},
			ValidateStatusUpdate: func(_ context.Context, o, old *v1.KubeVirt) field.ErrorList {
				return validation.ValidateKubeVirtStatusUpdate(o, old)
			},
			ResetStatus: func(o *v1.KubeVirt) { o.Status = v1.KubeVirtStatus{} },
			CopyStatus:  func(dst, src *v1.KubeVirt) { dst.Status = src.Status },
			CopySpec:    func(dst, src *v1.KubeVirt) { dst.Spec = src.Spec },
			Spec:        func(o *v1.KubeVirt) any { return o.Spec },
		},
		// KubeVirt's columns: AGE, then PHASE.
		Table: storeutil.Table[*v1.KubeVirt]{
			Columns: []metav1.TableColumnDefinition{
				storeutil.AgeColumn,
				storeutil.Column("Phase", "Deployment phase of the installation.", 0),
			},
			Cells: func(o *v1.KubeVirt, age string) []any {
				return []any{age, storeutil.OrNil(string(o.Status.Phase))}
			},
		},
	}
}

// DeployedStatus is the status of a KubeVirt object vireo-apiserver has just stored: Vireo's
// components are deployed by its manifests (there is no operator to wait for), and the API the
// object configures is served, as its creation proves.
func DeployedStatus(now metav1.Time) v1.KubeVirtStatus {
	return v1.KubeVirtStatus{
		Phase: v1.KubeVirtPhaseDeployed,
		Conditions: []v1.KubeVirtCondition{{
			Type: v1.KubeVirtConditionAvailable, Status: v1.ConditionTrue,
			LastProbeTime: now, LastTransitionTime: now, Reason: ReasonServed,
			Message: "vireo-apiserver serves the API and these settings; launcher Pods created from now on follow them",
		}},
	}
}
