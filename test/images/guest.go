package images

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Marker is the line the guest prints on ttyS0 (and draws on the VGA console) once it is
// ready: network configured, HTTP served, NoCloud user-data applied, console shell next.
const Marker = "VIREO-GUEST-READY"

// KernelCmdline is the guest kernel's command line, for kernelBoot and the boot disk alike.
// ttyS0 comes last, so that /dev/console (init's output, the shell) is the serial port; the
// kernel still prints to the VGA console too. quiet keeps the serial console (slow under
// emulation) to warnings. no_timer_check skips the kernel's test of the timer interrupt, as
// Linux does by itself under KVM: under TCG on a busy host the test can misjudge a working
// IO-APIC timer ("MP-BIOS bug: 8254 timer not connected to IO-APIC"), and the fallback it then
// picks left a CI boot with no timer interrupts, hung before init.
const KernelCmdline = "console=tty0 quiet no_timer_check console=ttyS0"

//go:embed guest
var guestFiles embed.FS

// guestFile returns one of the guest's files (the init script, udhcpc's script, ...).
func guestFile(name string) []byte {
	b, err := guestFiles.ReadFile("guest/" + name)
	if err != nil {
		panic(fmt.Sprintf("embedded guest file %s: %v", name, err)) // a build-time invariant
	}
	return b
}

// syslinuxConfig is the boot disk's syslinux.cfg: boot the kernel and initramfs at the root
// of the FAT filesystem at once, with cmdline.
func syslinuxConfig(kernel, initrd, cmdline string) string {
	return strings.Join([]string{
		"DEFAULT vireo",
		"PROMPT 0",
		"TIMEOUT 0",
		"LABEL vireo",
		"  KERNEL /" + kernel,
		"  INITRD /" + initrd,
		"  APPEND " + cmdline,
		"",
	}, "\n")
}

// initramfsTree is the guest's root filesystem: busybox, QEMU's guest agent with the
// libraries it loads, the init script and its helper files, the kernel modules (flat, with
// their load order), and the device nodes the kernel needs before init mounts devtmpfs.
func initramfsTree(busybox []byte, mods []module, agent map[string][]byte) (cpioTree, error) {
	t := cpioTree{}
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "usr/lib", "dev", "proc", "sys", "run", "tmp", "etc", "lib/modules",
		"lib/x86_64-linux-gnu", "lib64", "var", "mnt", "root"} {
		t.dir(d)
	}
	for name, data := range agent {
		t.file(name, 0o755, data)
	}
	t.file("etc/os-release", 0o644, guestFile("os-release"))
	t.charDevice("dev/console", 0o600, 5, 1)
	t.charDevice("dev/null", 0o666, 1, 3)
	t.file("bin/busybox", 0o755, busybox)
	t.symlink("bin/sh", "busybox")
	t.file("init", 0o755, guestFile("init"))
	t.file("etc/udhcpc.script", 0o755, guestFile("udhcpc.script"))
	t.file("etc/acpid.conf", 0o644, guestFile("acpid.conf"))
	t.file("etc/acpi/power-button", 0o755, guestFile("power-button"))
	t.file("sbin/shutdown", 0o755, guestFile("shutdown"))
	t.file("usr/sbin/chpasswd", 0o755, guestFile("chpasswd"))
	t.file("etc/profile", 0o644, guestFile("profile"))
	t.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	t.file("etc/group", 0o644, []byte("root:x:0:\n"))
	var order bytes.Buffer
	for _, m := range mods {
		b, err := os.ReadFile(m.Path)
		if err != nil {
			return nil, err
		}
		t.file("lib/modules/"+m.Name+".ko", 0o644, b)
		fmt.Fprintln(&order, m.Name)
	}
	t.file("lib/modules/load-order", 0o644, order.Bytes())
	return t, nil
}

// writeInitramfs writes the tree as a gzip-compressed newc cpio archive, as the kernel
// unpacks it. The gzip header carries no name or time, so equal trees give equal files.
func writeInitramfs(path string, t cpioTree) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	if err := t.writeTo(zw); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildInitramfs assembles the initramfs from the extracted busybox-static and kernel
// packages (modDir is the kernel's lib/modules/<version>).
func buildInitramfs(path, busyboxRoot, modDir string, agent map[string][]byte) ([]module, error) {
	bb, err := os.ReadFile(filepath.Join(busyboxRoot, "bin", "busybox"))
	if err != nil {
		return nil, fmt.Errorf("busybox-static: %w", err)
	}
	mods, err := resolveModules(modDir, guestModules)
	if err != nil {
		return nil, err
	}
	t, err := initramfsTree(bb, mods, agent)
	if err != nil {
		return nil, err
	}
	return mods, writeInitramfs(path, t)
}
