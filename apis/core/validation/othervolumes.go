package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// validateOtherVolumeSource checks the volume sources Vireo stores but does not run (a VMI using
// one fails with reason Unsupported): each must still be complete, as KubeVirt requires. It returns
// the names of the sources set, for the one-source rule.
func validateOtherVolumeSource(src *v1.VolumeSource, fldPath *field.Path) ([]string, field.ErrorList) {
	var set []string
	var errs field.ErrorList
	if s := src.Sysprep; s != nil {
		set = append(set, "sysprep")
		if (s.Secret == nil) == (s.ConfigMap == nil) {
			errs = append(errs, field.Invalid(fldPath.Child("sysprep"), "", "set exactly one of secret and configMap"))
		}
	}
	if s := src.Ephemeral; s != nil {
		set = append(set, "ephemeral")
		if s.PersistentVolumeClaim == nil {
			errs = append(errs, field.Required(fldPath.Child("ephemeral", "persistentVolumeClaim"), "the claim to use copy-on-write is required"))
		} else {
			errs = append(errs, validateObjectName(s.PersistentVolumeClaim.ClaimName,
				fldPath.Child("ephemeral", "persistentVolumeClaim", "claimName"), "PersistentVolumeClaim")...)
		}
	}
	if src.DownwardMetrics != nil {
		set = append(set, "downwardMetrics")
	}
	if s := src.MemoryDump; s != nil {
		set = append(set, "memoryDump")
		errs = append(errs, validateObjectName(s.ClaimName, fldPath.Child("memoryDump", "claimName"), "PersistentVolumeClaim")...)
	}
	if s := src.ContainerPath; s != nil {
		set = append(set, "containerPath")
		if strings.TrimSpace(s.Path) == "" || !strings.HasPrefix(s.Path, "/") {
			errs = append(errs, field.Invalid(fldPath.Child("containerPath", "path"), s.Path, "must be an absolute path in the launcher's container"))
		}
	}
	return set, errs
}
