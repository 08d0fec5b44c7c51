package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestGuestProgramFilesFromHost: the dependency walk, run on a host binary with the host's /
// as the one root, finds the loader and every library the binary loads, by soname.
func TestGuestProgramFilesFromHost(t *testing.T) {
	root := t.TempDir()
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls on this host")
	}
	real, err := filepath.EvalSymlinks(ls)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, guestAgentBinary)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := guestProgramFiles([]string{root, "/"}, guestAgentBinary)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, data := range files {
		if len(data) == 0 {
			t.Errorf("%s is empty", name)
		}
		names = append(names, name)
	}
	for _, want := range []string{guestAgentBinary, "lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6"} {
		if !slices.Contains(names, want) {
			t.Errorf("files %v lack %s", names, want)
		}
	}
}

// TestGuestProgramFilesNamesWhatIsMissing: a library no root has is named in the error.
func TestGuestProgramFilesNamesWhatIsMissing(t *testing.T) {
	if _, err := guestProgramFiles([]string{t.TempDir()}, guestBinaries...); err == nil {
		t.Error("no qemu-ga anywhere was accepted")
	}
}

func TestGuestProgramPackages(t *testing.T) {
	for name, want := range map[string]bool{"qemu-guest-agent": true, "libglib2.0-0": true, "perl-base": false, "dpkg": false,
		"libperl5.36": false, "dropbear-bin": true, "libfile-find-rule-perl": false} {
		if got := isGuestProgramPackage(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
