// Package validation checks cdi.kubevirt.io DataVolumes before they are
// stored, with CDI's rules, so that an import that cannot work is refused at the API with every
// problem listed by its full field path instead of failing later in an importer pod.
package validation

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// MinVolumeSize is the smallest volume, in bytes, a DataVolume may ask for: 1 MiB.
const MinVolumeSize int64 = 1 << 20

// sourceNames lists the DataVolume sources, for messages.
const sourceNames = "http, registry, upload, blank, pvc"

// checksumHexLength is the number of hexadecimal digits of the digest of each checksum algorithm
// an HTTP source may name, as CDI accepts them.
var checksumHexLength = map[string]int{"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}

// hexDigits matches a non-empty string of hexadecimal digits, in either case.
var hexDigits = regexp.MustCompile(`^[0-9a-fA-F]+$`)

// accessModes are the access modes a volume may ask for.
var accessModes = []cdiv1beta1.PersistentVolumeAccessMode{
	cdiv1beta1.ReadWriteOnce, cdiv1beta1.ReadOnlyMany, cdiv1beta1.ReadWriteMany, cdiv1beta1.ReadWriteOncePod,
}

// volumeModes are the volume modes a volume may ask for.
var volumeModes = []cdiv1beta1.PersistentVolumeMode{cdiv1beta1.PersistentVolumeFilesystem, cdiv1beta1.PersistentVolumeBlock}

// contentTypes are the content types a DataVolume may declare.
var contentTypes = []cdiv1beta1.DataVolumeContentType{cdiv1beta1.DataVolumeKubeVirt, cdiv1beta1.DataVolumeArchive}

// ValidateDataVolume validates a DataVolume that is being created: its metadata and its spec.
func ValidateDataVolume(dv *cdiv1beta1.DataVolume) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&dv.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidateDataVolumeSpec(&dv.Spec, field.NewPath("spec"))...)
}

// ValidateDataVolumeUpdate validates an update of a DataVolume: like CDI, Vireo refuses any change
// of the spec, since the import it describes has already been started.
func ValidateDataVolumeUpdate(dv, old *cdiv1beta1.DataVolume) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&dv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if !apiequality.Semantic.DeepEqual(dv.Spec, old.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"the spec of a DataVolume cannot be changed after creation; delete it and create a new one"))
	}
	return errs
}

// ValidateDataVolumeSpec validates a DataVolume spec found at fldPath; VirtualMachines use it for
// their dataVolumeTemplates too.
func ValidateDataVolumeSpec(spec *cdiv1beta1.DataVolumeSpec, fldPath *field.Path) field.ErrorList {
	errs := validateSource(spec.Source, fldPath.Child("source"))
	isClone := spec.Source != nil && spec.Source.PVC != nil
	switch {
	case spec.Storage == nil && spec.PVC == nil:
		errs = append(errs, field.Required(fldPath.Child("storage"),
			"describe the volume to create in exactly one of storage and pvc"))
	case spec.Storage != nil && spec.PVC != nil:
		errs = append(errs, field.Forbidden(fldPath.Child("pvc"),
			"storage and pvc are mutually exclusive; set only one of them (storage is preferred)"))
	case spec.Storage != nil:
		// With storage the size of a clone may be left out: it is taken from the source claim.
		s := spec.Storage
		errs = append(errs, validateVolume(s.AccessModes, s.Resources, s.VolumeMode, isClone, fldPath.Child("storage"))...)
	default:
		// A pvc is created exactly as given, so it needs its size and exactly one access mode, as in CDI.
		p := spec.PVC
		pPath := fldPath.Child("pvc")
		switch {
		case len(p.AccessModes) == 0:
			errs = append(errs, field.Required(pPath.Child("accessModes"),
				"a pvc needs exactly one access mode, such as ReadWriteOnce; or use storage, which picks one from the storage class"))
		case len(p.AccessModes) > 1:
			errs = append(errs, field.TooMany(pPath.Child("accessModes"), len(p.AccessModes), 1))
		}
		errs = append(errs, validateVolume(p.AccessModes, p.Resources, p.VolumeMode, false, pPath)...)
	}
	return append(errs, validateContentType(spec, fldPath)...)
}

// validateSource checks that exactly one source is set and that it is complete.
func validateSource(src *cdiv1beta1.DataVolumeSource, fldPath *field.Path) field.ErrorList {
	if src == nil {
		return field.ErrorList{field.Required(fldPath, "must specify exactly one source: "+sourceNames)}
	}
	var errs field.ErrorList
	var set []string
	if src.HTTP != nil {
		set = append(set, "http")
		errs = append(errs, validateURL(src.HTTP.URL, []string{"http", "https"}, fldPath.Child("http", "url"),
			"https://example.com/images/disk.qcow2")...)
		if src.HTTP.Checksum != "" {
			errs = append(errs, validateChecksum(src.HTTP.Checksum, fldPath.Child("http", "checksum"))...)
		}
		for i, h := range src.HTTP.ExtraHeaders {
			errs = append(errs, validateHeader(h, fldPath.Child("http", "extraHeaders").Index(i))...)
		}
		for i, name := range src.HTTP.SecretExtraHeaders {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(fldPath.Child("http", "secretExtraHeaders").Index(i), name, "a Secret name: "+msg))
			}
		}
	}
	if src.Registry != nil {
		set = append(set, "registry")
		u := ""
		if src.Registry.URL != nil {
			u = *src.Registry.URL
		}
		errs = append(errs, validateURL(u, []string{"docker"}, fldPath.Child("registry", "url"),
			"docker://quay.io/containerdisks/fedora:41")...)
	}
	if src.Upload != nil {
		set = append(set, "upload")
	}
	if src.Blank != nil {
		set = append(set, "blank")
	}
	if src.PVC != nil {
		set = append(set, "pvc")
		errs = append(errs, validateSourcePVC(src.PVC, fldPath.Child("pvc"))...)
	}
	switch {
	case len(set) == 0:
		errs = append(errs, field.Required(fldPath, "must specify exactly one source: "+sourceNames))
	case len(set) > 1:
		errs = append(errs, field.Invalid(fldPath, strings.Join(set, ", "),
			"must specify exactly one source: "+sourceNames))
	}
	return errs
}

// headerName is an HTTP header name (RFC 9110's token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateHeader checks that h is "Name: value" with a valid name and no line breaks.
func validateHeader(h string, fldPath *field.Path) field.ErrorList {
	name, _, found := strings.Cut(h, ":")
	if !found || !headerName.MatchString(strings.TrimSpace(name)) || strings.ContainsAny(h, "\r\n") {
		return field.ErrorList{field.Invalid(fldPath, h, `must be an HTTP header line "Name: value", such as "Authorization: Bearer abc"`)}
	}
	return nil
}

// validateChecksum checks that checksum is "algorithm:hex" with a known algorithm and a digest of
// that algorithm's length.
func validateChecksum(checksum string, fldPath *field.Path) field.ErrorList {
	if _, _, err := ParseChecksum(checksum); err != nil {
		return field.ErrorList{field.Invalid(fldPath, checksum, err.Error())}
	}
	return nil
}

// ParseChecksum splits a DataVolume checksum, "<algorithm>:<hex digest>" as CDI writes it with
// algorithm md5, sha1, sha256 or sha512, into its algorithm and digest; the error says what is
// wrong with it. The importer, which verifies the checksum, parses it with this too.
func ParseChecksum(checksum string) (algorithm string, digest []byte, err error) {
	algorithm, hexDigest, found := strings.Cut(checksum, ":")
	length, known := checksumHexLength[algorithm]
	switch {
	case !found || !known:
		return "", nil, errors.New(`must be "algorithm:hex" with algorithm md5, sha1, sha256 or sha512, such as "sha256:" followed by 64 hexadecimal digits`)
	case len(hexDigest) != length || !hexDigits.MatchString(hexDigest):
		return "", nil, fmt.Errorf("a %s digest is %d hexadecimal digits (0-9, a-f) after %q", algorithm, length, algorithm+":")
	}
	digest, err = hex.DecodeString(hexDigest)
	return algorithm, digest, err
}

// validateURL checks that raw is an absolute URL with one of schemes and a host.
func validateURL(raw string, schemes []string, fldPath *field.Path, example string) field.ErrorList {
	if raw == "" {
		return field.ErrorList{field.Required(fldPath, "a URL such as "+example+" is required")}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return field.ErrorList{field.Invalid(fldPath, raw, "must be an absolute URL such as "+example)}
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(fldPath, raw,
		"the URL scheme must be "+strings.Join(schemes, " or ")+", as in "+example)}
}

// validateSourcePVC checks the claim to clone; its namespace defaults to the DataVolume's.
func validateSourcePVC(src *cdiv1beta1.DataVolumeSourcePVC, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "the name of the PersistentVolumeClaim to clone is required"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(src.Name) {
			errs = append(errs, field.Invalid(fldPath.Child("name"), src.Name, msg))
		}
	}
	if src.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(src.Namespace) {
			errs = append(errs, field.Invalid(fldPath.Child("namespace"), src.Namespace, msg))
		}
	}
	return errs
}

// validateVolume checks the access modes, size and volume mode of the volume to create. The size
// is at least MinVolumeSize; it may be left out only when sizeFromSource, where it is taken from
// the claim being cloned.
func validateVolume(modes []cdiv1beta1.PersistentVolumeAccessMode, res cdiv1beta1.VolumeResourceRequirements,
	mode *cdiv1beta1.PersistentVolumeMode, sizeFromSource bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, m := range modes {
		errs = append(errs, fieldcheck.Enum(m, accessModes, fldPath.Child("accessModes").Index(i))...)
	}
	sizePath := fldPath.Child("resources", "requests", "storage")
	size, hasSize := res.Requests[cdiv1beta1.ResourceStorage]
	switch {
	case !hasSize && !sizeFromSource:
		errs = append(errs, field.Required(sizePath, "the size of the volume, such as 10Gi, is required"))
	case hasSize && size.Sign() <= 0:
		errs = append(errs, field.Invalid(sizePath, size.String(), "must be greater than zero, such as 10Gi"))
	case hasSize && size.Value() < MinVolumeSize:
		errs = append(errs, field.Invalid(sizePath, size.String(), "must be at least 1Mi, such as 10Gi"))
	}
	if mode != nil {
		errs = append(errs, fieldcheck.Enum(*mode, volumeModes, fldPath.Child("volumeMode"))...)
	}
	return errs
}

// validateContentType checks the content type, and that an archive comes from http or upload and
// goes to a filesystem volume, where it can be extracted.
func validateContentType(spec *cdiv1beta1.DataVolumeSpec, fldPath *field.Path) field.ErrorList {
	ctPath := fldPath.Child("contentType")
	if spec.ContentType == "" {
		return nil
	}
	if errs := fieldcheck.Enum(spec.ContentType, contentTypes, ctPath); len(errs) > 0 {
		return errs
	}
	if spec.ContentType != cdiv1beta1.DataVolumeArchive {
		return nil
	}
	var errs field.ErrorList
	if src := spec.Source; src != nil && src.HTTP == nil && src.Upload == nil {
		errs = append(errs, field.Invalid(ctPath, spec.ContentType, "archive content is only supported with the http and upload sources"))
	}
	var mode *cdiv1beta1.PersistentVolumeMode
	if spec.Storage != nil {
		mode = spec.Storage.VolumeMode
	} else if spec.PVC != nil {
		mode = spec.PVC.VolumeMode
	}
	if mode != nil && *mode == cdiv1beta1.PersistentVolumeBlock {
		errs = append(errs, field.Invalid(ctPath, spec.ContentType, "archive content must go to a Filesystem volume, not a Block one"))
	}
	return errs
}

// dataVolumePhases are the phases a DataVolume's status may report.
var dataVolumePhases = []cdiv1beta1.DataVolumePhase{
	cdiv1beta1.Pending, cdiv1beta1.PVCBound, cdiv1beta1.ImportScheduled, cdiv1beta1.ImportInProgress,
	cdiv1beta1.UploadScheduled, cdiv1beta1.UploadReady, cdiv1beta1.WaitForFirstConsumer, cdiv1beta1.Paused,
	cdiv1beta1.Succeeded, cdiv1beta1.Failed, cdiv1beta1.Unknown,
}

// ValidateDataVolumeStatusUpdate validates a write of a DataVolume's status: a known phase and
// well-formed conditions, one per type.
func ValidateDataVolumeStatusUpdate(dv, _ *cdiv1beta1.DataVolume) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := fieldcheck.OptionalEnum(dv.Status.Phase, dataVolumePhases, statusPath.Child("phase"))
	return append(errs, fieldcheck.Conditions(dv.Status.Conditions, func(c cdiv1beta1.DataVolumeCondition) (string, string) {
		return string(c.Type), string(c.Status)
	}, statusPath.Child("conditions"))...)
}
