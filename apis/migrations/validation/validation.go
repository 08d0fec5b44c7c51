// Package validation checks MigrationPolicies as KubeVirt's admission does, with field paths
// in every error.
package validation

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
)

// ValidateMigrationPolicy validates a new policy.
func ValidateMigrationPolicy(p *v1alpha1.MigrationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(&p.Spec, nil)...)
}

// ValidateMigrationPolicyUpdate validates an update of a policy; its spec may change, and
// applies to migrations that start afterwards.
func ValidateMigrationPolicyUpdate(p, old *v1alpha1.MigrationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&p.Spec, &old.Spec)...)
}

func validateSpec(spec, old *v1alpha1.MigrationPolicySpec) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec")
	if spec.Selectors == nil {
		errs = append(errs, field.Required(path.Child("selectors"), "a policy needs selectors (they may be empty: {} selects every VMI)"))
	} else {
		sPath := path.Child("selectors")
		errs = append(errs, metav1validation.ValidateLabels(spec.Selectors.NamespaceSelector, sPath.Child("namespaceSelector"))...)
		errs = append(errs, metav1validation.ValidateLabels(spec.Selectors.VirtualMachineInstanceSelector, sPath.Child("virtualMachineInstanceSelector"))...)
	}
	if t := spec.CompletionTimeoutPerGiB; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(path.Child("completionTimeoutPerGiB"), *t, "must not be negative"))
	}
	if b := spec.BandwidthPerMigration; b != nil && b.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("bandwidthPerMigration"), b.String(), "must not be negative (0 means no limit)"))
	}
	var oldDowntime *int64
	if old != nil {
		oldDowntime = old.MaxDowntimeMs
	}
	if spec.MaxDowntimeMs != nil && !apiequality.Semantic.DeepEqual(spec.MaxDowntimeMs, oldDowntime) {
		errs = append(errs, field.Forbidden(path.Child("maxDowntimeMs"),
			"maxDowntimeMs cannot be modified without enabling the MigrationStallDetection or MigrationDowntimeTuning feature gate, which Vireo does not have"))
	}
	return errs
}
