package validation

import (
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// MaxInlineCloudInitBytes is the largest cloud-init user-data or network-data that may be given
// inline; larger data goes in a Secret (secretRef), as in KubeVirt.
const MaxInlineCloudInitBytes = 2048

// volumeSourceNames lists the volume sources, for messages.
const volumeSourceNames = "hostDisk, containerDisk, persistentVolumeClaim, dataVolume, cloudInitNoCloud, cloudInitConfigDrive, emptyDisk, configMap, secret, serviceAccount, downwardAPI, sysprep, ephemeral, downwardMetrics, memoryDump, containerPath"

// hostDiskTypes are the types a host disk may have.
var hostDiskTypes = []v1.HostDiskType{v1.HostDiskExists, v1.HostDiskExistsOrCreate}

// validateStorage validates the volumes and the disks that attach them: they pair up one to one by
// name (in a template a volume may still lack its disk), and each is well-formed. Boot orders are
// checked with the interfaces' in validateBootOrder.
func validateStorage(spec *v1.VirtualMachineInstanceSpec, fldPath *field.Path, opts specOptions) field.ErrorList {
	var errs field.ErrorList
	volumesPath := fldPath.Child("volumes")
	disksPath := fldPath.Child("domain", "devices", "disks")
	volumes := map[string]bool{}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		vPath := volumesPath.Index(i)
		errs = append(errs, validateDeviceName(v.Name, volumes, vPath.Child("name"))...)
		volumes[v.Name] = true
		errs = append(errs, validateVolumeSource(&v.VolumeSource, vPath)...)
	}
	errs = append(errs, validateOneServiceAccount(spec.Volumes, volumesPath)...)
	disks := map[string]bool{}
	for i := range spec.Domain.Devices.Disks {
		d := &spec.Domain.Devices.Disks[i]
		dPath := disksPath.Index(i)
		errs = append(errs, validateDeviceName(d.Name, disks, dPath.Child("name"))...)
		disks[d.Name] = true
		if d.Name != "" && !volumes[d.Name] {
			errs = append(errs, field.Invalid(dPath.Child("name"), d.Name, fmt.Sprintf(
				"no volume named %q in %s; every disk must attach a volume of the same name", d.Name, volumesPath)))
		}
		errs = append(errs, validateDisk(d, dPath)...)
		errs = append(errs, validateLunVolume(d, spec.Volumes, dPath)...)
	}
	if opts.template {
		return errs
	}
	for _, fs := range spec.Domain.Devices.Filesystems {
		disks[fs.Name] = true // a filesystem shares its volume instead of a disk
	}
	for i, v := range spec.Volumes {
		if v.Name != "" && !disks[v.Name] && v.MemoryDump == nil { // a memory dump's claim is the host's
			errs = append(errs, field.Invalid(volumesPath.Index(i).Child("name"), v.Name, fmt.Sprintf(
				"no disk attaches this volume; add a disk named %q to %s", v.Name, disksPath)))
		}
	}
	return errs
}

// validateDeviceName checks the name of a volume or disk: required, a DNS-1123 label, and not
// already in seen.
func validateDeviceName(name string, seen map[string]bool, fldPath *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(fldPath, "a name is required")}
	case seen[name]:
		return field.ErrorList{field.Duplicate(fldPath, name)}
	}
	return validateDNS1123Label(name, fldPath)
}

// validateVolumeSource checks that a volume has exactly one source and that the source is complete.
func validateVolumeSource(src *v1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if s := src.HostDisk; s != nil {
		set = append(set, "hostDisk")
		errs = append(errs, validateHostDisk(s, fldPath.Child("hostDisk"))...)
	}
	if s := src.ContainerDisk; s != nil {
		set = append(set, "containerDisk")
		cPath := fldPath.Child("containerDisk")
		if strings.TrimSpace(s.Image) == "" {
			errs = append(errs, field.Required(cPath.Child("image"),
				"the container image that holds the disk is required, such as quay.io/containerdisks/fedora:41"))
		}
		if s.Path != "" {
			errs = append(errs, validateImagePath(s.Path, cPath.Child("path"))...)
		}
		errs = append(errs, fieldcheck.OptionalEnum(s.ImagePullPolicy, pullPolicies, cPath.Child("imagePullPolicy"))...)
		if s.ImagePullSecret != "" {
			errs = append(errs, validateObjectName(s.ImagePullSecret, cPath.Child("imagePullSecret"), "Secret")...)
		}
	}
	if s := src.PersistentVolumeClaim; s != nil {
		set = append(set, "persistentVolumeClaim")
		errs = append(errs, validateObjectName(s.ClaimName,
			fldPath.Child("persistentVolumeClaim", "claimName"), "PersistentVolumeClaim")...)
	}
	if s := src.DataVolume; s != nil {
		set = append(set, "dataVolume")
		errs = append(errs, validateObjectName(s.Name, fldPath.Child("dataVolume", "name"), "DataVolume")...)
	}
	if src.CloudInitNoCloud != nil {
		set = append(set, "cloudInitNoCloud")
	}
	if src.CloudInitConfigDrive != nil {
		set = append(set, "cloudInitConfigDrive")
	}
	if s, name := src.CloudInit(); s != nil {
		errs = append(errs, validateCloudInit(s, fldPath.Child(name))...)
	}
	if s := src.EmptyDisk; s != nil {
		set = append(set, "emptyDisk")
		if s.Capacity.Sign() <= 0 {
			errs = append(errs, field.Invalid(fldPath.Child("emptyDisk", "capacity"), s.Capacity.String(),
				"must be greater than zero, such as 10Gi"))
		}
	}
	configSet, configErrs := validateConfigVolumeSource(src, fldPath)
	set, errs = append(set, configSet...), append(errs, configErrs...)
	otherSet, otherErrs := validateOtherVolumeSource(src, fldPath)
	set, errs = append(set, otherSet...), append(errs, otherErrs...)
	switch {
	case len(set) == 0:
		errs = append(errs, field.Required(fldPath, "a volume must have exactly one of "+volumeSourceNames))
	case len(set) > 1:
		errs = append(errs, field.Invalid(fldPath, strings.Join(set, ", "),
			"a volume must have exactly one of "+volumeSourceNames))
	}
	return errs
}

// validateHostDisk checks a disk image on the node: an absolute path, a known type, and a capacity
// exactly when the image may be created (KubeVirt refuses a capacity with type Disk).
func validateHostDisk(h *v1.HostDisk, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case h.Path == "":
		errs = append(errs, field.Required(fldPath.Child("path"),
			"the absolute path of the disk image on the node is required, such as /var/lib/vm-disks/disk.img"))
	case !path.IsAbs(h.Path):
		errs = append(errs, field.Invalid(fldPath.Child("path"), h.Path, "must be an absolute path on the node"))
	}
	errs = append(errs, fieldcheck.Enum(h.Type, hostDiskTypes, fldPath.Child("type"))...)
	capPath := fldPath.Child("capacity")
	switch {
	case h.Capacity.Sign() < 0:
		errs = append(errs, field.Invalid(capPath, h.Capacity.String(), "must not be negative"))
	case h.Type == v1.HostDiskExistsOrCreate && h.Capacity.IsZero():
		errs = append(errs, field.Required(capPath,
			"type DiskOrCreate needs the capacity of the image to create, such as 10Gi"))
	case h.Type == v1.HostDiskExists && !h.Capacity.IsZero():
		errs = append(errs, field.Invalid(capPath, h.Capacity.String(),
			"a capacity is only allowed with type DiskOrCreate; the image of type Disk already exists"))
	}
	return errs
}

// validateCloudInit checks the cloud-init data (NoCloud's or a config drive's): at most one
// user-data and one network-data source, some data at all, Secret names, valid base64, and
// inline data no larger than MaxInlineCloudInitBytes.
func validateCloudInit(s *v1.CloudInitNoCloudSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	count := func(set ...bool) int {
		n := 0
		for _, b := range set {
			if b {
				n++
			}
		}
		return n
	}
	users := count(s.UserData != "", s.UserDataBase64 != "", s.UserDataSecretRef != nil)
	networks := count(s.NetworkData != "", s.NetworkDataBase64 != "", s.NetworkDataSecretRef != nil)
	switch {
	case users > 1:
		errs = append(errs, field.Invalid(fldPath, "multiple user-data sources",
			"set only one of userData, userDataBase64 and secretRef"))
	case users == 0 && networks == 0:
		errs = append(errs, field.Required(fldPath,
			"set one of userData, userDataBase64 and secretRef, or one of networkData, networkDataBase64 and networkDataSecretRef"))
	}
	if networks > 1 {
		errs = append(errs, field.Invalid(fldPath, "multiple network-data sources",
			"set only one of networkData, networkDataBase64 and networkDataSecretRef"))
	}
	if s.UserDataSecretRef != nil {
		errs = append(errs, validateObjectName(s.UserDataSecretRef.Name, fldPath.Child("secretRef", "name"),
			"Secret holding the user-data")...)
	}
	if s.NetworkDataSecretRef != nil {
		errs = append(errs, validateObjectName(s.NetworkDataSecretRef.Name, fldPath.Child("networkDataSecretRef", "name"),
			"Secret holding the network data")...)
	}
	errs = append(errs, validateInlineSize(len(s.UserData), fldPath.Child("userData"))...)
	errs = append(errs, validateInlineSize(len(s.NetworkData), fldPath.Child("networkData"))...)
	errs = append(errs, validateInlineBase64(s.UserDataBase64, fldPath.Child("userDataBase64"))...)
	return append(errs, validateInlineBase64(s.NetworkDataBase64, fldPath.Child("networkDataBase64"))...)
}

// validateInlineBase64 checks inline base64 cloud-init data: valid standard base64 whose
// content is no larger than MaxInlineCloudInitBytes.
func validateInlineBase64(data string, fldPath *field.Path) field.ErrorList {
	if data == "" {
		return nil
	}
	decoded, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, "<omitted>", "must be valid standard base64: "+err.Error())}
	}
	return validateInlineSize(len(decoded), fldPath)
}

// validateInlineSize reports an error when inline cloud-init data of size bytes is too large.
func validateInlineSize(size int, fldPath *field.Path) field.ErrorList {
	if size <= MaxInlineCloudInitBytes {
		return nil
	}
	e := field.TooLong(fldPath, "", MaxInlineCloudInitBytes)
	e.Detail = fmt.Sprintf("is %d bytes, more than the %d bytes allowed inline; "+
		"put larger data in a Secret and use secretRef", size, MaxInlineCloudInitBytes)
	return field.ErrorList{e}
}
