package disks

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// KernelBoot checks the kernel and initrd of kernelBoot.container in its image, mounted at
// root (an image volume: read-only and fixed for the Pod's life), and returns them for
// domain.Inputs.KernelBoot (nil for nil). Each must be a regular file, reached without a
// symlink on the way (the image is the user's); QEMU reads them by path, as checked here.
func KernelBoot(root string, c *v1.KernelBootContainer) (*domain.KernelBootFiles, error) {
	if c == nil {
		return nil, nil
	}
	out := &domain.KernelBootFiles{}
	for _, f := range []struct {
		what, path string
		dst        *string
	}{{"kernel", c.KernelPath, &out.Kernel}, {"initrd", c.InitrdPath, &out.Initrd}} {
		if f.path == "" {
			continue
		}
		rel := strings.TrimPrefix(path.Clean("/"+f.path), "/")
		file, err := openBeneath(root, rel)
		if err != nil {
			return nil, fmt.Errorf("the %s %s in kernelBoot image %s: %w", f.what, f.path, c.Image, readableHint(err))
		}
		file.Close()
		*f.dst = filepath.Join(root, rel)
	}
	return out, nil
}
