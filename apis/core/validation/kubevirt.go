package validation

import (
	"fmt"
	"slices"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// ValidateKubeVirt validates a KubeVirt settings object that is being created: it must live in
// the installation's namespace, and its settings must be usable. (That it is the only one is
// checked by the registry, which can see the others.)
func ValidateKubeVirt(kv *v1.KubeVirt) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&kv.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if kv.Namespace != "" && kv.Namespace != v1.InstallNamespace {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), kv.Namespace, fmt.Sprintf(
			"Vireo reads its settings from one KubeVirt object in namespace %s (the installation's namespace) and accepts none elsewhere: create it there, or edit the one that exists (kubectl -n %s get kubevirt)",
			v1.InstallNamespace, v1.InstallNamespace)))
	}
	return append(errs, validateKubeVirtSpec(&kv.Spec, field.NewPath("spec"))...)
}

// ValidateKubeVirtUpdate validates an update of a KubeVirt settings object: every setting may
// change (and applies from then on), so the spec is checked as on create.
func ValidateKubeVirtUpdate(kv, old *v1.KubeVirt) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&kv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateKubeVirtSpec(&kv.Spec, field.NewPath("spec"))...)
}

// validateKubeVirtSpec checks the settings of a KubeVirt object.
func validateKubeVirtSpec(spec *v1.KubeVirtSpec, fldPath *field.Path) field.ErrorList {
	errs := validateWorkloadUpdateStrategy(spec.WorkloadUpdateStrategy, fldPath.Child("workloadUpdateStrategy"))
	return append(errs, validateMigrationConfiguration(spec.Configuration.MigrationConfiguration,
		fldPath.Child("configuration", "migrations"))...)
}

// workloadUpdateMethods are the methods spec.workloadUpdateStrategy may list.
var workloadUpdateMethods = []v1.WorkloadUpdateMethod{v1.WorkloadUpdateMethodLiveMigrate, v1.WorkloadUpdateMethodEvict}

// validateWorkloadUpdateStrategy checks spec.workloadUpdateStrategy: known methods, each once,
// and batches that are not negative. (KubeVirt ignores an unknown method; Vireo refuses it, as
// a misspelt one would otherwise silently leave every guest on the old launcher.)
func validateWorkloadUpdateStrategy(s *v1.KubeVirtWorkloadUpdateStrategy, fldPath *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[v1.WorkloadUpdateMethod]bool{}
	for i, m := range s.WorkloadUpdateMethods {
		p := fldPath.Child("workloadUpdateMethods").Index(i)
		switch {
		case !slices.Contains(workloadUpdateMethods, m):
			errs = append(errs, field.NotSupported(p, m, workloadUpdateMethods))
		case seen[m]:
			errs = append(errs, field.Duplicate(p, m))
		}
		seen[m] = true
	}
	if n := s.BatchEvictionSize; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("batchEvictionSize"), *n,
			"must not be negative (launcher Pods evicted per batch); leave it out for KubeVirt's default of 10"))
	}
	if d := s.BatchEvictionInterval; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("batchEvictionInterval"), d.Duration.String(),
			"must not be negative: a duration such as 1m between batches of evictions; leave it out for KubeVirt's default of 1m"))
	}
	return errs
}

// validateMigrationConfiguration checks spec.configuration.migrations.
func validateMigrationConfiguration(m *v1.MigrationConfiguration, mPath *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	for _, limit := range []struct {
		name  string
		value *uint32
	}{
		{"parallelMigrationsPerCluster", m.ParallelMigrationsPerCluster},
		{"parallelOutboundMigrationsPerNode", m.ParallelOutboundMigrationsPerNode},
	} {
		if limit.value != nil && *limit.value == 0 {
			errs = append(errs, field.Invalid(mPath.Child(limit.name), *limit.value,
				"must be 1 or more (0 would stop every live migration); leave it out for KubeVirt's default"))
		}
	}
	for _, timeout := range []struct {
		name  string
		value *int64
	}{
		{"completionTimeoutPerGiB", m.CompletionTimeoutPerGiB},
		{"progressTimeout", m.ProgressTimeout},
	} {
		if timeout.value != nil && *timeout.value < 0 {
			errs = append(errs, field.Invalid(mPath.Child(timeout.name), *timeout.value,
				"must not be negative (seconds); leave it out for KubeVirt's default of 150"))
		}
	}
	// 0 (KubeVirt's default, "0Mi") means no limit.
	if b := m.BandwidthPerMigration; b != nil && b.Sign() < 0 {
		errs = append(errs, field.Invalid(mPath.Child("bandwidthPerMigration"), b.String(),
			"must not be negative: a quantity of bytes per second such as 64Mi, or 0 (or leave it out) for no limit"))
	}
	return errs
}

// kubeVirtPhases are the phases a KubeVirt object's status may report.
var kubeVirtPhases = []v1.KubeVirtPhase{
	v1.KubeVirtPhaseDeploying, v1.KubeVirtPhaseDeployed, v1.KubeVirtPhaseDeleting, v1.KubeVirtPhaseDeleted,
}

// ValidateKubeVirtStatusUpdate validates a write of a KubeVirt object's status: a known phase,
// well-formed conditions, one per type, and an observed generation the object has had.
func ValidateKubeVirtStatusUpdate(kv, _ *v1.KubeVirt) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := fieldcheck.OptionalEnum(kv.Status.Phase, kubeVirtPhases, statusPath.Child("phase"))
	errs = append(errs, fieldcheck.Conditions(kv.Status.Conditions, func(c v1.KubeVirtCondition) (string, string) {
		return string(c.Type), string(c.Status)
	}, statusPath.Child("conditions"))...)
	if g := kv.Status.ObservedGeneration; g != nil && (*g < 0 || *g > kv.Generation) {
		errs = append(errs, field.Invalid(statusPath.Child("observedGeneration"), *g,
			fmt.Sprintf("must be between 0 and the object's generation %d", kv.Generation)))
	}
	if n := kv.Status.OutdatedVirtualMachineInstanceWorkloads; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("outdatedVirtualMachineInstanceWorkloads"), *n, "must not be negative"))
	}
	return errs
}
