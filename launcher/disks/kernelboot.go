package disks

import (
	"fmt"
	"path/filepath"

	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// KernelBoot checks the kernel and initrd the node agent extracted for kernelBoot into the
// node's read-only image cache and returns them for domain.Inputs.KernelBoot (nil for nil).
// Each must be an absolute, clean path to a regular file, opened without following a symlink;
// QEMU reads them by path, as the launcher checked them.
func KernelBoot(files *protocol.KernelBootFiles) (*domain.KernelBootFiles, error) {
	if files == nil {
		return nil, nil
	}
	out := &domain.KernelBootFiles{}
	for _, f := range []struct {
		what, path string
		dst        *string
	}{{"kernel", files.Kernel, &out.Kernel}, {"initrd", files.Initrd, &out.Initrd}} {
		if f.path == "" {
			continue
		}
		if !filepath.IsAbs(f.path) || filepath.Clean(f.path) != f.path {
			return nil, fmt.Errorf("the %s file %q the node agent gave must be an absolute, clean path", f.what, f.path)
		}
		file, err := openBeneath(filepath.Dir(f.path), filepath.Base(f.path))
		if err != nil {
			return nil, fmt.Errorf("the %s extracted from the kernelBoot image: %w", f.what, err)
		}
		file.Close()
		*f.dst = f.path
	}
	return out, nil
}
