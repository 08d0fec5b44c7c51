package validation

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/internal/fieldcheck"
)

// maxSerialLength is the longest firmware or disk serial number, in characters (KubeVirt's limit).
const maxSerialLength = 256

// serialPattern is what firmware and disk serial numbers may consist of, as KubeVirt (and libvirt) allow.
var serialPattern = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)

// validateFirmware checks the firmware UUID and serial number, the bootloader choice and direct
// kernel boot.
func validateFirmware(fw *v1.Firmware, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fw.UUID != "" && !isLibvirtUUID(string(fw.UUID)) {
		errs = append(errs, field.Invalid(fldPath.Child("uuid"), string(fw.UUID),
			"must be a UUID of 32 hexadecimal digits, optionally grouped by '-', such as "+
				"6a1a24a1-4061-4607-8bf4-a3963d0c5895; or leave it empty to get one generated"))
	}
	if fw.Serial != "" {
		errs = append(errs, validateSerial(fw.Serial, fldPath.Child("serial"))...)
	}
	if bl := fw.Bootloader; bl != nil && bl.BIOS != nil && bl.EFI != nil {
		errs = append(errs, field.Invalid(fldPath.Child("bootloader"), "bios and efi",
			"bios and efi are mutually exclusive; set only one of them"))
	}
	if bl := fw.Bootloader; bl != nil && bl.EFI != nil && bl.EFI.Persistent != nil && *bl.EFI.Persistent {
		errs = append(errs, field.Forbidden(fldPath.Child("bootloader", "efi", "persistent"),
			"Vireo does not keep EFI variables across restarts yet (KubeVirt keeps them on a volume of its vmStateStorageClass): "+
				"remove persistent; the variables last as long as the VMI"))
	}
	if kb := fw.KernelBoot; kb != nil {
		errs = append(errs, validateKernelBoot(kb, fldPath.Child("kernelBoot"))...)
	}
	return errs
}

// isLibvirtUUID reports whether s is a UUID in a form libvirt (and so KubeVirt, which passes the
// firmware UUID to libvirt unchanged) accepts: exactly 32 hexadecimal digits in either case, read
// in pairs, with '-' or ' ' allowed before any pair and whitespace around the whole. Canonical
// (8-4-4-4-12), undashed and differently grouped UUIDs are all accepted.
func isLibvirtUUID(s string) bool {
	s = strings.TrimSpace(s)
	for pairs := 0; pairs < 16; pairs++ {
		s = strings.TrimLeft(s, "- ")
		if len(s) < 2 || !isHexDigit(s[0]) || !isHexDigit(s[1]) {
			return false
		}
		s = s[2:]
	}
	return s == ""
}

// isHexDigit reports whether c is a hexadecimal digit.
func isHexDigit(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// validateSerial checks a firmware or disk serial number: at most maxSerialLength characters from
// [A-Za-z0-9_.+-], as KubeVirt requires.
func validateSerial(serial string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len([]rune(serial)); n > maxSerialLength {
		e := field.TooLong(fldPath, "", maxSerialLength)
		e.Detail = fmt.Sprintf("is %d characters, more than the %d allowed", n, maxSerialLength)
		errs = append(errs, e)
	}
	if !serialPattern.MatchString(serial) {
		errs = append(errs, field.Invalid(fldPath, serial,
			"may contain only letters, digits, '_', '.', '+' and '-' (regular expression [A-Za-z0-9_.+-]+)"))
	}
	return errs
}

// validateKernelBoot checks that direct kernel boot names an image and something to boot in it.
func validateKernelBoot(kb *v1.KernelBoot, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	c := kb.Container
	if c == nil {
		if kb.KernelArgs != "" {
			errs = append(errs, field.Invalid(fldPath.Child("kernelArgs"), kb.KernelArgs,
				"kernel arguments need a kernel: set kernelBoot.container with the image holding it"))
		}
		return errs
	}
	cPath := fldPath.Child("container")
	if c.Image == "" {
		errs = append(errs, field.Required(cPath.Child("image"),
			"the container image that holds the kernel and initrd is required"))
	}
	if c.KernelPath == "" && c.InitrdPath == "" {
		errs = append(errs, field.Required(cPath, "set kernelPath, initrdPath or both"))
	}
	if c.KernelPath != "" {
		errs = append(errs, validateImagePath(c.KernelPath, cPath.Child("kernelPath"))...)
	}
	if c.InitrdPath != "" {
		errs = append(errs, validateImagePath(c.InitrdPath, cPath.Child("initrdPath"))...)
	}
	if c.ImagePullSecret != "" {
		errs = append(errs, validateObjectName(c.ImagePullSecret, cPath.Child("imagePullSecret"), "Secret")...)
	}
	return append(errs, fieldcheck.OptionalEnum(c.ImagePullPolicy, pullPolicies, cPath.Child("imagePullPolicy"))...)
}
