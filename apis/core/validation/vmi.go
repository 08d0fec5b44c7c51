package validation

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// specOptions adjusts the checks of a VMI spec to where the spec is found.
type specOptions struct {
	// template is set for the VMI template of a VirtualMachine. Templates are stored without the
	// VMI defaults, so a volume need not have a disk yet: the VMI created from the template is
	// defaulted (and so gets one) before it is validated itself.
	template bool
	// sized is set for the template of a VM with an instancetype: the instancetype gives the
	// guest its memory, so the template need not.
	sized bool
}

// ValidateVirtualMachineInstance validates a VMI that is being created: its metadata and its spec.
func ValidateVirtualMachineInstance(vmi *v1.VirtualMachineInstance) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&vmi.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidateVirtualMachineInstanceSpec(&vmi.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineInstanceSpec validates a defaulted VMI spec found at fldPath.
func ValidateVirtualMachineInstanceSpec(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	return validateSpec(spec, fldPath, specOptions{})
}

// validateSpec validates a VMI spec found at fldPath, as opts says.
func validateSpec(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path, opts specOptions) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateDomain(&spec.Domain, fldPath.Child("domain"), opts.sized)...)
	errs = append(errs, validateStorage(spec, fldPath, opts)...)
	errs = append(errs, validateNetworking(spec, fldPath)...)
	errs = append(errs, validateBootOrder(spec, fldPath)...)
	errs = append(errs, validateScheduling(spec, fldPath)...)
	errs = append(errs, validateProbes(spec, fldPath)...)
	errs = append(errs, validateAccessCredentials(spec, fldPath)...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *g,
			"must be 0 (stop at once) or a positive number of seconds"))
	}
	if s := spec.EvictionStrategy; s != nil {
		errs = append(errs, fieldcheck.Enum(*s, []v1.EvictionStrategy{
			v1.EvictionStrategyNone, v1.EvictionStrategyLiveMigrate,
			v1.EvictionStrategyLiveMigrateIfPossible, v1.EvictionStrategyExternal,
		}, fldPath.Child("evictionStrategy"))...)
	}
	if s := spec.StartStrategy; s != nil {
		errs = append(errs, fieldcheck.Enum(*s, []v1.StartStrategy{v1.StartStrategyPaused},
			fldPath.Child("startStrategy"))...)
	}
	if spec.Hostname != "" {
		errs = append(errs, validateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, validateDNS1123Subdomain(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	return errs
}

// ValidateVirtualMachineInstanceUpdate validates an update of a VMI: the spec may not change,
// because the running guest cannot follow it.
func ValidateVirtualMachineInstanceUpdate(vmi, old *v1.VirtualMachineInstance) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&vmi.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateGraceUpdate(vmi.Spec.TerminationGracePeriodSeconds, old.Spec.TerminationGracePeriodSeconds)...)
	spec := vmi.Spec
	spec.TerminationGracePeriodSeconds = old.Spec.TerminationGracePeriodSeconds
	if !apiequality.Semantic.DeepEqual(spec, old.Spec) {
		errs = append(errs, immutableSpecError(vmi.Spec, old.Spec, field.NewPath("spec"),
			"to change the virtual machine, edit the template of its VirtualMachine and restart it, "+
				"or delete and re-create the VirtualMachineInstance"))
	}
	return errs
}

// validateGraceUpdate allows one change of a running VMI's spec: a shorter
// terminationGracePeriodSeconds (what a forced stop with a grace period writes). A longer one
// could not be honoured: the launcher Pod's own grace period was fixed when it was created.
func validateGraceUpdate(grace, old *int64) field.ErrorList {
	g, o := v1.DefaultGracePeriodSeconds, v1.DefaultGracePeriodSeconds
	if grace != nil {
		g = *grace
	}
	if old != nil {
		o = *old
	}
	path := field.NewPath("spec", "terminationGracePeriodSeconds")
	switch {
	case g == o:
		return nil
	case g < 0:
		return field.ErrorList{field.Invalid(path, g, "must not be negative")}
	case g > o:
		return field.ErrorList{field.Invalid(path, g, fmt.Sprintf("may only be lowered once the VMI exists (it is %d): its launcher Pod's grace period was fixed when it was created", o))}
	}
	return nil
}

// vmiPhases are the phases a VMI status may report.
var vmiPhases = []v1.VirtualMachineInstancePhase{
	v1.Pending, v1.Scheduling, v1.Scheduled, v1.Running,
	v1.Succeeded, v1.Failed, v1.Unknown,
}

// ValidateVirtualMachineInstanceStatusUpdate validates a write of a VMI's status: a known phase,
// well-formed conditions, at most one of each type (server-side apply keys them by type), and a
// runtime user ID that is not negative.
func ValidateVirtualMachineInstanceStatusUpdate(vmi, _ *v1.VirtualMachineInstance) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := fieldcheck.OptionalEnum(vmi.Status.Phase, vmiPhases, statusPath.Child("phase"))
	errs = append(errs, fieldcheck.Conditions(vmi.Status.Conditions, func(c v1.VirtualMachineInstanceCondition) (string, string) {
		return string(c.Type), string(c.Status)
	}, statusPath.Child("conditions"))...)
	if u := vmi.Status.RuntimeUser; u < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("runtimeUser"), u, "a user ID cannot be negative"))
	}
	return errs
}

// vmPrintableStatuses are the summaries a VirtualMachine's status may show.
var vmPrintableStatuses = []v1.VirtualMachinePrintableStatus{
	v1.VirtualMachineStatusStopped, v1.VirtualMachineStatusProvisioning, v1.VirtualMachineStatusStarting,
	v1.VirtualMachineStatusRunning, v1.VirtualMachineStatusPaused, v1.VirtualMachineStatusStopping,
	v1.VirtualMachineStatusTerminating, v1.VirtualMachineStatusCrashLoopBackOff, v1.VirtualMachineStatusMigrating,
	v1.VirtualMachineStatusUnknown, v1.VirtualMachineStatusUnschedulable, v1.VirtualMachineStatusErrImagePull,
	v1.VirtualMachineStatusImagePullBackOff, v1.VirtualMachineStatusPvcNotFound, v1.VirtualMachineStatusDataVolumeError,
	v1.VirtualMachineStatusWaitingForVolumeBinding, v1.VirtualMachineStatusWaitingForReceiver,
}

// ValidateVirtualMachineStatusUpdate validates a write of a VM's status: a known printable status
// and well-formed conditions, one per type.
func ValidateVirtualMachineStatusUpdate(vm, _ *v1.VirtualMachine) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := fieldcheck.OptionalEnum(vm.Status.PrintableStatus, vmPrintableStatuses, statusPath.Child("printableStatus"))
	return append(errs, fieldcheck.Conditions(vm.Status.Conditions, func(c v1.VirtualMachineCondition) (string, string) {
		return string(c.Type), string(c.Status)
	}, statusPath.Child("conditions"))...)
}

// migrationPhases are the phases a migration's status may report.
var migrationPhases = []v1.VirtualMachineInstanceMigrationPhase{
	v1.MigrationPending, v1.MigrationScheduling, v1.MigrationScheduled, v1.MigrationPreparingTarget,
	v1.MigrationTargetReady, v1.MigrationRunning, v1.MigrationSucceeded, v1.MigrationFailed,
}

// ValidateVirtualMachineInstanceMigrationStatusUpdate validates a write of a migration's status:
// a known phase and well-formed conditions, one per type.
func ValidateVirtualMachineInstanceMigrationStatusUpdate(m, _ *v1.VirtualMachineInstanceMigration) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := fieldcheck.OptionalEnum(m.Status.Phase, migrationPhases, statusPath.Child("phase"))
	return append(errs, fieldcheck.Conditions(m.Status.Conditions, func(c v1.VirtualMachineInstanceMigrationCondition) (string, string) {
		return string(c.Type), string(c.Status)
	}, statusPath.Child("conditions"))...)
}
