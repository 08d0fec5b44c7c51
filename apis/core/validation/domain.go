package validation

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// MinGuestMemory is the least memory, in bytes, a guest may be given (KubeVirt's 1M).
const MinGuestMemory int64 = 1000 * 1000

// MaxVCPUs is the largest number of vCPUs (sockets × cores × threads) a guest may have.
const MaxVCPUs = 512

// EmulatedMachines are the glob patterns a machine type must match (KubeVirt's amd64 default).
var EmulatedMachines = []string{"q35*", "pc-q35*"}

// pullPolicies are the allowed image pull policies.
var pullPolicies = []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever}

// uuidPattern matches a UUID in its canonical textual form.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// validateDomain validates the guest's virtual hardware.
func validateDomain(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateMemory(domain, fldPath)...)
	errs = append(errs, validateCPU(domain, fldPath)...)
	if m := domain.Machine; m != nil && m.Type != "" && !machineTypeSupported(m.Type) {
		errs = append(errs, field.Invalid(fldPath.Child("machine", "type"), m.Type,
			"unsupported machine type; it must match one of "+strings.Join(EmulatedMachines, ", ")+", such as q35"))
	}
	if domain.Firmware != nil {
		errs = append(errs, validateFirmware(domain.Firmware, fldPath.Child("firmware"))...)
	}
	return errs
}

// machineTypeSupported reports whether machineType matches one of EmulatedMachines.
func machineTypeSupported(machineType string) bool {
	for _, pattern := range EmulatedMachines {
		if ok, _ := path.Match(pattern, machineType); ok {
			return true
		}
	}
	return false
}

// validateMemory checks that the guest gets memory, at least 1M of it, and that no request
// (including the guest memory) exceeds the memory limit.
func validateMemory(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	resPath := fldPath.Child("resources")
	request, hasRequest := domain.Resources.Requests[v1.ResourceMemory]
	limit, hasLimit := domain.Resources.Limits[v1.ResourceMemory]
	var guest *resource.Quantity
	if domain.Memory != nil {
		guest = domain.Memory.Guest
	}
	if !hasRequest && !hasLimit && guest == nil {
		return field.ErrorList{field.Required(resPath.Child("requests", "memory"),
			"no memory requested: set at least one of spec.domain.resources.requests.memory, "+
				"spec.domain.resources.limits.memory and spec.domain.memory.guest")}
	}
	if hasRequest {
		errs = append(errs, validateMemoryQuantity(request, resPath.Child("requests", "memory"))...)
	}
	if hasLimit {
		errs = append(errs, validateMemoryQuantity(limit, resPath.Child("limits", "memory"))...)
	}
	if guest != nil {
		errs = append(errs, validateMemoryQuantity(*guest, fldPath.Child("memory", "guest"))...)
	}
	if hasRequest && hasLimit && request.Cmp(limit) > 0 {
		errs = append(errs, field.Invalid(resPath.Child("requests", "memory"), request.String(),
			fmt.Sprintf("must be less than or equal to the memory limit %s", limit.String())))
	}
	if guest != nil && hasLimit && guest.Cmp(limit) > 0 {
		errs = append(errs, field.Invalid(fldPath.Child("memory", "guest"), guest.String(),
			fmt.Sprintf("must be less than or equal to the memory limit %s", limit.String())))
	}
	return errs
}

// validateMemoryQuantity checks that a memory amount is at least MinGuestMemory bytes.
func validateMemoryQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must not be negative")}
	}
	if q.Value() < MinGuestMemory {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be at least 1M (1000000 bytes)")}
	}
	return nil
}

// validateCPU checks the CPU request and limit and the vCPU topology.
func validateCPU(domain *v1.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	resPath := fldPath.Child("resources")
	request, hasRequest := domain.Resources.Requests[v1.ResourceCPU]
	limit, hasLimit := domain.Resources.Limits[v1.ResourceCPU]
	if hasRequest {
		errs = append(errs, validateNonNegativeQuantity(request, resPath.Child("requests", "cpu"))...)
	}
	if hasLimit {
		errs = append(errs, validateNonNegativeQuantity(limit, resPath.Child("limits", "cpu"))...)
	}
	if hasRequest && hasLimit && request.Cmp(limit) > 0 {
		errs = append(errs, field.Invalid(resPath.Child("requests", "cpu"), request.String(),
			fmt.Sprintf("must be less than or equal to the CPU limit %s", limit.String())))
	}
	if cpu := domain.CPU; cpu != nil {
		// Each count is capped first, so that the product cannot overflow.
		s, c, t := atLeastOne(cpu.Sockets), atLeastOne(cpu.Cores), atLeastOne(cpu.Threads)
		if s > MaxVCPUs || c > MaxVCPUs || t > MaxVCPUs || s*c*t > MaxVCPUs {
			topology := fmt.Sprintf("sockets=%d, cores=%d, threads=%d", s, c, t)
			errs = append(errs, field.Invalid(fldPath.Child("cpu"), topology, fmt.Sprintf(
				"sockets × cores × threads may be at most %d vCPUs", MaxVCPUs)))
		}
	}
	return errs
}

// atLeastOne widens a topology count, treating an unset (0) count as 1.
func atLeastOne(n uint32) int64 {
	if n == 0 {
		return 1
	}
	return int64(n)
}

// validateFirmware checks the firmware UUID, the bootloader choice and direct kernel boot.
func validateFirmware(fw *v1.Firmware, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fw.UUID != "" && !uuidPattern.MatchString(string(fw.UUID)) {
		errs = append(errs, field.Invalid(fldPath.Child("uuid"), string(fw.UUID),
			"must be a UUID such as 6a1a24a1-4061-4607-8bf4-a3963d0c5895, or empty to get one generated"))
	}
	if bl := fw.Bootloader; bl != nil && bl.BIOS != nil && bl.EFI != nil {
		errs = append(errs, field.Invalid(fldPath.Child("bootloader"), "bios and efi",
			"bios and efi are mutually exclusive; set only one of them"))
	}
	if kb := fw.KernelBoot; kb != nil {
		errs = append(errs, validateKernelBoot(kb, fldPath.Child("kernelBoot"))...)
	}
	return errs
}

// validateKernelBoot checks that direct kernel boot names an image and something to boot in it.
func validateKernelBoot(kb *v1.KernelBoot, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	c := kb.Container
	if c == nil {
		if kb.KernelArgs != "" {
			errs = append(errs, field.Required(fldPath.Child("container"),
				"kernelArgs can only be used with a kernel boot container holding the kernel"))
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
	for _, p := range []struct{ name, value string }{{"kernelPath", c.KernelPath}, {"initrdPath", c.InitrdPath}} {
		if p.value != "" && !strings.HasPrefix(p.value, "/") {
			errs = append(errs, field.Invalid(cPath.Child(p.name), p.value, "must be an absolute path inside the image"))
		}
	}
	return append(errs, validateEnum(c.ImagePullPolicy, pullPolicies, cPath.Child("imagePullPolicy"))...)
}
