package disks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestKernelBootFiles: the launcher takes the kernel and initrd of the kernelBoot image mounted
// at its root only as regular files, reached without a symlink on the way.
func TestKernelBootFiles(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "boot/vmlinuz", "x")
	mkfile(t, root, "boot/initrd", "x")
	if err := os.Symlink(filepath.Join(root, "boot", "vmlinuz"), filepath.Join(root, "boot", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "boot"), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	got, err := KernelBoot(root, &v1.KernelBootContainer{Image: "k:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"})
	if err != nil || got.Kernel != filepath.Join(root, "boot", "vmlinuz") || got.Initrd != filepath.Join(root, "boot", "initrd") {
		t.Errorf("KernelBoot = %+v, %v", got, err)
	}
	if got, err := KernelBoot(root, nil); got != nil || err != nil {
		t.Errorf("KernelBoot(nil) = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		c    v1.KernelBootContainer
		want string
	}{
		{v1.KernelBootContainer{KernelPath: "/boot/link"}, "symlink"},
		{v1.KernelBootContainer{KernelPath: "/linkdir/vmlinuz"}, "symlink"},
		{v1.KernelBootContainer{KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/link"}, "initrd"},
		{v1.KernelBootContainer{KernelPath: "/boot"}, "not a regular file"},
		{v1.KernelBootContainer{KernelPath: "/boot/missing"}, "no such file"},
	} {
		tc.c.Image = "k:1"
		if _, err := KernelBoot(root, &tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KernelBoot(%+v) = %v, want an error saying %q", tc.c, err, tc.want)
		}
	}
}
