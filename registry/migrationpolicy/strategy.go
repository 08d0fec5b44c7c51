// Package migrationpolicy is the registry of MigrationPolicies (migrations.kubevirt.io/v1alpha1,
// cluster-scoped): validation, status separation and kubectl columns.
package migrationpolicy

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	"github.com/vireo-dev/vireo/apis/migrations/validation"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Resource describes MigrationPolicies to the generic registry.
func Resource() storeutil.Resource[*v1alpha1.MigrationPolicy] {
	return storeutil.Resource[*v1alpha1.MigrationPolicy]{
		Plural:   v1alpha1.Resource("migrationpolicies"),
		Singular: v1alpha1.Resource("migrationpolicy"),
		New:      func() runtime.Object { return &v1alpha1.MigrationPolicy{} },
		NewList:  func() runtime.Object { return &v1alpha1.MigrationPolicyList{} },
		Hooks: storeutil.Hooks[*v1alpha1.MigrationPolicy]{
			APIVersion:    v1alpha1.SchemeGroupVersion.String(),
			ClusterScoped: true,
			Validate: func(_ context.Context, o *v1alpha1.MigrationPolicy) field.ErrorList {
				return validation.ValidateMigrationPolicy(o)
			},
			ValidateUpdate: func(_ context.Context, o, old *v1alpha1.MigrationPolicy) field.ErrorList {
				return validation.ValidateMigrationPolicyUpdate(o, old)
			},
			ResetStatus: func(o *v1alpha1.MigrationPolicy) { o.Status = v1alpha1.MigrationPolicyStatus{} },
			CopyStatus:  func(dst, src *v1alpha1.MigrationPolicy) { dst.Status = src.Status },
			CopySpec:    func(dst, src *v1alpha1.MigrationPolicy) { dst.Spec = src.Spec },
			Spec:        func(o *v1alpha1.MigrationPolicy) any { return o.Spec },
		},
		Table: storeutil.Table[*v1alpha1.MigrationPolicy]{
			Columns: []metav1.TableColumnDefinition{storeutil.AgeColumn},
			Cells:   func(_ *v1alpha1.MigrationPolicy, age string) []any { return []any{age} },
		},
	}
}
