package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Host tools the disk images are made with (Debian packages in parentheses); the build checks
// for them first, so a missing one is named before anything is downloaded.
var diskTools = map[string]string{
	"mkfs.vfat": "dosfstools",
	"mcopy":     "mtools",
	"syslinux":  "syslinux",
	"qemu-img":  "qemu-utils",
	"dpkg-deb":  "dpkg",
	"apt-get":   "apt",
}

// EFI loader files the boot disk carries besides syslinux's BIOS loader, from the host's
// packages (in parentheses): syslinux's EFI loader and its core module.
var efiLoaderFiles = map[string]string{
	syslinuxEFI: "syslinux-efi",
	ldlinuxE64:  "syslinux-common",
}

const (
	syslinuxEFI = "/usr/lib/SYSLINUX.EFI/efi64/syslinux.efi"
	ldlinuxE64  = "/usr/lib/syslinux/modules/efi64/ldlinux.e64"
)

func checkTools() error {
	var missing []string
	for tool, pkg := range diskTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" ("+pkg+")")
		}
	}
	for file, pkg := range efiLoaderFiles {
		if _, err := os.Stat(file); err != nil {
			missing = append(missing, file+" ("+pkg+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the image builder needs %s: run hack/install-deps.sh", strings.Join(missing, ", "))
	}
	return nil
}

const mib = 1 << 20

// bootDiskSize is the FAT image's size for payload bytes of files: room for the filesystem's
// own structures and syslinux, rounded up to whole MiB.
func bootDiskSize(payload int64) int64 {
	size := payload + payload/8 + 2*mib
	return (size + mib - 1) / mib * mib
}

// makeBootDisk writes a raw disk image that SeaBIOS and OVMF boot: one FAT filesystem over the
// whole disk (no partition table), syslinux's boot sector and loader installed into it with
// `syslinux --install` (no loop mount), the kernel, initramfs and syslinux.cfg copied in with
// mcopy, and for EFI firmware syslinux's EFI loader as the removable-media path
// /EFI/BOOT/BOOTX64.EFI with its core module and the same syslinux.cfg.
func makeBootDisk(ctx context.Context, disk, kernel, initrd string) error {
	dir := filepath.Dir(disk)
	cfg := filepath.Join(dir, "syslinux.cfg")
	if err := os.WriteFile(cfg, []byte(syslinuxConfig(filepath.Base(kernel), filepath.Base(initrd), KernelCmdline)), 0o644); err != nil {
		return err
	}
	defer os.Remove(cfg)
	var payload int64
	for _, p := range []string{kernel, initrd, cfg, cfg, syslinuxEFI, ldlinuxE64} {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		payload += fi.Size()
	}
	f, err := os.Create(disk)
	if err != nil {
		return err
	}
	if err := f.Truncate(bootDiskSize(payload)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	steps := [][]string{
		// --invariant: a fixed volume ID and times instead of random and current ones.
		{"mkfs.vfat", "--invariant", "-n", "VIREOBOOT", disk},
		{"mcopy", "-i", disk, kernel, initrd, cfg, "::/"},
		{"syslinux", "--install", disk},
		{"mmd", "-i", disk, "::/EFI", "::/EFI/BOOT"},
		{"mcopy", "-i", disk, syslinuxEFI, "::/EFI/BOOT/BOOTX64.EFI"},
		{"mcopy", "-i", disk, ldlinuxE64, cfg, "::/EFI/BOOT/"},
	}
	for _, s := range steps {
		if err := runTool(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// convertQCOW2 converts the raw disk into qcow2 (what containerDisks usually hold).
func convertQCOW2(ctx context.Context, raw, qcow2 string) error {
	return runTool(ctx, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow2)
}

func runTool(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	// mtools checks a floppy's geometry; the image is a hard disk without one.
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
