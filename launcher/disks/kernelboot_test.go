package disks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vireo-dev/vireo/launcher/protocol"
)

// TestKernelBootFiles: the launcher takes the node agent's kernel and initrd only as regular
// files at absolute, clean paths, never through a symlink.
func TestKernelBootFiles(t *testing.T) {
	dir := t.TempDir()
	kernel, initrd := filepath.Join(dir, "k"), filepath.Join(dir, "i")
	for _, p := range []string{kernel, initrd} {
		if err := os.WriteFile(p, []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(kernel, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := KernelBoot(&protocol.KernelBootFiles{Kernel: kernel, Initrd: initrd})
	if err != nil || got.Kernel != kernel || got.Initrd != initrd {
		t.Errorf("KernelBoot = %+v, %v", got, err)
	}
	if got, err := KernelBoot(nil); got != nil || err != nil {
		t.Errorf("KernelBoot(nil) = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		files protocol.KernelBootFiles
		want  string
	}{
		{protocol.KernelBootFiles{Kernel: filepath.Join(dir, "link")}, "symlink"},
		{protocol.KernelBootFiles{Kernel: kernel, Initrd: filepath.Join(dir, "link")}, "initrd"},
		{protocol.KernelBootFiles{Kernel: "k"}, "absolute, clean path"},
		{protocol.KernelBootFiles{Kernel: dir + "/../k"}, "absolute, clean path"},
		{protocol.KernelBootFiles{Kernel: filepath.Join(dir, "d")}, "not a regular file"},
		{protocol.KernelBootFiles{Kernel: filepath.Join(dir, "missing")}, "no such file"},
	} {
		if _, err := KernelBoot(&tc.files); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KernelBoot(%+v) = %v, want an error saying %q", tc.files, err, tc.want)
		}
	}
}
