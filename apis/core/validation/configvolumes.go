package validation

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// maxVolumeLabel is the longest volume label an ISO 9660 image carries (its volume identifier).
const maxVolumeLabel = 32

// maxDownwardAPIPath is the longest path a downwardAPI file may have, as Kubernetes allows.
const maxDownwardAPIPath = 4096

// downwardAPIFieldPaths are the launcher Pod's fields a downwardAPI file may hold, as
// Kubernetes allows them in a downwardAPI volume.
var downwardAPIFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"}

// subscriptedFieldPath is one label or annotation: metadata.labels['KEY'].
var subscriptedFieldPath = regexp.MustCompile(`^metadata\.(labels|annotations)\['[^']+'\]$`)

// downwardAPIResources are the container resources a downwardAPI file may hold.
var downwardAPIResources = []string{"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage"}

// validateConfigVolumeSource checks a configMap, secret, serviceAccount or downwardAPI volume
// source and returns the names of those that are set, for the one-source check.
func validateConfigVolumeSource(src *v1.VolumeSource, fldPath *field.Path) ([]string, field.ErrorList) {
	var set []string
	var errs field.ErrorList
	if s := src.ConfigMap; s != nil {
		set = append(set, "configMap")
		errs = append(errs, validateObjectName(s.Name, fldPath.Child("configMap", "name"), "ConfigMap")...)
		errs = append(errs, validateVolumeLabel(s.VolumeLabel, fldPath.Child("configMap", "volumeLabel"))...)
	}
	if s := src.Secret; s != nil {
		set = append(set, "secret")
		errs = append(errs, validateObjectName(s.SecretName, fldPath.Child("secret", "secretName"), "Secret")...)
		errs = append(errs, validateVolumeLabel(s.VolumeLabel, fldPath.Child("secret", "volumeLabel"))...)
	}
	if s := src.ServiceAccount; s != nil {
		set = append(set, "serviceAccount")
		errs = append(errs, validateObjectName(s.ServiceAccountName, fldPath.Child("serviceAccount", "serviceAccountName"), "ServiceAccount")...)
	}
	if s := src.DownwardAPI; s != nil {
		set = append(set, "downwardAPI")
		errs = append(errs, validateDownwardAPI(s, fldPath.Child("downwardAPI"))...)
	}
	return set, errs
}

// validateVolumeLabel checks a disk's volume label: empty (the default) or at most 32
// printable ASCII characters, which is what an ISO 9660 volume identifier holds.
func validateVolumeLabel(label string, fldPath *field.Path) field.ErrorList {
	if len(label) > maxVolumeLabel {
		return field.ErrorList{field.TooLong(fldPath, label, maxVolumeLabel)}
	}
	for _, r := range label {
		if r < 0x20 || r > 0x7e {
			return field.ErrorList{field.Invalid(fldPath, label, "must hold only printable ASCII characters, such as cidata or OEMDRV")}
		}
	}
	return nil
}

// validateDownwardAPI checks a downwardAPI disk's files: each a relative path without "..",
// unique, with exactly one of fieldRef and resourceFieldRef naming what Kubernetes' downward
// API gives a volume, and a mode of at most 0777.
func validateDownwardAPI(s *v1.DownwardAPIVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateVolumeLabel(s.VolumeLabel, fldPath.Child("volumeLabel"))
	if len(s.Fields) == 0 {
		errs = append(errs, field.Required(fldPath.Child("fields"), "list at least one file, such as {path: labels, fieldRef: {fieldPath: metadata.labels}}"))
	}
	paths := map[string]bool{}
	for i, f := range s.Fields {
		fPath := fldPath.Child("fields").Index(i)
		errs = append(errs, validateRelativeFilePath(f.Path, fPath.Child("path"))...)
		if paths[f.Path] {
			errs = append(errs, field.Duplicate(fPath.Child("path"), f.Path))
		}
		paths[f.Path] = true
		switch {
		case f.FieldRef != nil && f.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(fPath, "fieldRef, resourceFieldRef", "set only one of fieldRef and resourceFieldRef"))
		case f.FieldRef != nil:
			errs = append(errs, validateDownwardAPIField(f.FieldRef, fPath.Child("fieldRef"))...)
		case f.ResourceFieldRef != nil:
			errs = append(errs, validateDownwardAPIResource(f.ResourceFieldRef, fPath.Child("resourceFieldRef"))...)
		default:
			errs = append(errs, field.Required(fPath, "set one of fieldRef and resourceFieldRef"))
		}
		if f.Mode != nil && (*f.Mode < 0 || *f.Mode > 0o777) {
			errs = append(errs, field.Invalid(fPath.Child("mode"), *f.Mode, "must be a file mode between 0 and 0777 (511)"))
		}
	}
	return errs
}

// validateRelativeFilePath checks a file's path on a disk: required, relative, at most
// maxDownwardAPIPath bytes, and no ".." component.
func validateRelativeFilePath(p string, fldPath *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fldPath, "the file's path on the disk is required, such as labels")}
	case len(p) > maxDownwardAPIPath:
		return field.ErrorList{field.TooLong(fldPath, "<omitted>", maxDownwardAPIPath)}
	case strings.HasPrefix(p, "/"):
		return field.ErrorList{field.Invalid(fldPath, p, "must be a relative path, such as labels or meta/name")}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(fldPath, p, `must not contain ".."`)}
		}
		if part == "" || part == "." {
			return field.ErrorList{field.Invalid(fldPath, p, `must not contain empty or "." components`)}
		}
	}
	if strings.HasPrefix(p, "..") {
		return field.ErrorList{field.Invalid(fldPath, p, `must not start with ".."`)}
	}
	return nil
}

// validateDownwardAPIField checks a fieldRef: API version v1 (or unset) and one of the fields
// Kubernetes' downward API gives a volume.
func validateDownwardAPIField(ref *v1.ObjectFieldSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.APIVersion != "" && ref.APIVersion != "v1" {
		errs = append(errs, field.NotSupported(fldPath.Child("apiVersion"), ref.APIVersion, []string{"v1"}))
	}
	for _, p := range downwardAPIFieldPaths {
		if ref.FieldPath == p {
			return errs
		}
	}
	if subscriptedFieldPath.MatchString(ref.FieldPath) {
		return errs
	}
	return append(errs, field.NotSupported(fldPath.Child("fieldPath"), ref.FieldPath,
		append(downwardAPIFieldPaths, "metadata.labels['KEY']", "metadata.annotations['KEY']")))
}

// validateDownwardAPIResource checks a resourceFieldRef: a resource Kubernetes' downward API
// gives, of the launcher's container, with a positive divisor if any.
func validateDownwardAPIResource(ref *v1.ResourceFieldSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.ContainerName != "" && ref.ContainerName != v1.LauncherContainerName {
		errs = append(errs, field.NotSupported(fldPath.Child("containerName"), ref.ContainerName, []string{v1.LauncherContainerName}))
	}
	known := false
	for _, r := range downwardAPIResources {
		known = known || ref.Resource == r
	}
	if !known {
		errs = append(errs, field.NotSupported(fldPath.Child("resource"), ref.Resource, downwardAPIResources))
	}
	if ref.Divisor.Sign() < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("divisor"), ref.Divisor.String(), "must be positive, such as 1Mi"))
	}
	return errs
}

// validateOneServiceAccount refuses a second serviceAccount volume: the launcher Pod runs as
// the ServiceAccount whose credentials it hands the guest, and a Pod has one.
func validateOneServiceAccount(volumes []v1.Volume, fldPath *field.Path) field.ErrorList {
	first := -1
	for i := range volumes {
		if volumes[i].ServiceAccount == nil {
			continue
		}
		if first >= 0 {
			return field.ErrorList{field.Invalid(fldPath.Index(i).Child("serviceAccount"), volumes[i].ServiceAccount.ServiceAccountName,
				fmt.Sprintf("a VMI may have one serviceAccount volume; %s already is one", fldPath.Index(first)))}
		}
		first = i
	}
	return nil
}
