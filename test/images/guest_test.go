package images

import (
	"strings"
	"testing"
)

func TestSyslinuxConfig(t *testing.T) {
	got := syslinuxConfig("vmlinuz", "initrd.img", "console=tty0 console=ttyS0 quiet")
	want := `DEFAULT vireo
PROMPT 0
TIMEOUT 0
LABEL vireo
  KERNEL /vmlinuz
  INITRD /initrd.img
  APPEND console=tty0 console=ttyS0 quiet
`
	if got != want {
		t.Errorf("syslinux.cfg:\n%s\nwant:\n%s", got, want)
	}
}

func TestKernelCmdlineEndsWithSerialConsole(t *testing.T) {
	// The last console= is /dev/console: init's output and the shell must go to ttyS0.
	if want := "console=ttyS0"; !endsWithConsole(KernelCmdline, want) {
		t.Errorf("KernelCmdline %q: the last console must be %s", KernelCmdline, want)
	}
}

func endsWithConsole(cmdline, want string) bool {
	last := ""
	for _, f := range strings.Fields(cmdline) {
		if strings.HasPrefix(f, "console=") {
			last = f
		}
	}
	return last == want
}

func TestInitramfsTree(t *testing.T) {
	tree, err := initramfsTree([]byte("busybox"), nil, map[string][]byte{"usr/sbin/qemu-ga": []byte("agent")})
	if err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]uint32{
		"init": 0o100755, "bin/busybox": 0o100755, "bin/sh": 0o120777, "dev/console": 0o020600,
		"etc/acpi/power-button": 0o100755, "etc/udhcpc.script": 0o100755, "lib/modules/load-order": 0o100644,
		"usr/sbin/qemu-ga": 0o100755, "etc/os-release": 0o100644,
	} {
		e, ok := tree[name]
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if got, err := cpioMode(e.Mode); err != nil || got != mode {
			t.Errorf("%s: mode %o (%v), want %o", name, got, err, mode)
		}
	}
}

func TestBootDiskSize(t *testing.T) {
	for payload, want := range map[int64]int64{0: 2 * mib, 10 * mib: 14 * mib, 10*mib + 1: 14 * mib, 8 * mib: 11 * mib} {
		if got := bootDiskSize(payload); got != want {
			t.Errorf("bootDiskSize(%d) = %d MiB, want %d MiB", payload, got/mib, want/mib)
		}
	}
}
