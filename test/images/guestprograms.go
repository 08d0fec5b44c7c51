package images

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// guestAgentPackage is QEMU's guest agent; the guest runs its qemu-ga on the virtio-serial
// port org.qemu.guest_agent.0, as a KubeVirt guest image does.
const guestAgentPackage = "qemu-guest-agent"

// sshServerPackage is Dropbear, the guest's small SSH server (for ssh and scp through
// port-forward).
const sshServerPackage = "dropbear-bin"

// sftpServerPackage is OpenSSH's SFTP server, which Dropbear runs for the sftp subsystem:
// OpenSSH's scp speaks SFTP.
const sftpServerPackage = "openssh-sftp-server"

// guestAgentBinary is qemu-ga's path in its package and in the guest.
const guestAgentBinary = "usr/sbin/qemu-ga"

// sftpServerBinary is sftp-server's path in its package; sftpServerGuestPath is where Debian's
// Dropbear looks for it.
const (
	sftpServerBinary    = "usr/lib/openssh/sftp-server"
	sftpServerGuestPath = "usr/lib/sftp-server"
)

// guestBinaries are the dynamically linked programs the guest gets from Debian's packages, at
// their paths in their packages (and in the guest, but sftp-server: see guestPrograms): QEMU's
// guest agent, Dropbear's server and key generator, and the SFTP server.
var guestBinaries = []string{guestAgentBinary, "usr/sbin/dropbear", "usr/bin/dropbearkey", sftpServerBinary}

// guestPrograms is guestProgramFiles of guestBinaries, sftp-server moved to where Dropbear
// runs it.
func guestPrograms(roots []string) (map[string][]byte, error) {
	files, err := guestProgramFiles(roots, guestBinaries...)
	if err != nil {
		return nil, err
	}
	files[sftpServerGuestPath] = files[sftpServerBinary]
	delete(files, sftpServerBinary)
	return files, nil
}

// libraryDirs are where Debian's packages keep shared libraries, and where the guest's dynamic
// loader looks for them (its built-in multiarch search path: there is no ld.so.cache).
var libraryDirs = []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64"}

// isGuestProgramPackage reports whether a package of the guest programs' dependency closure
// may hold a program or a library one loads: the programs' own packages, zlib1g and the lib*
// packages but Perl's; the closure's tools (dpkg, perl-base, tar...) and their modules are never loaded.
func isGuestProgramPackage(name string) bool {
	return name == guestAgentPackage || name == sshServerPackage || name == sftpServerPackage || name == "zlib1g" ||
		(strings.HasPrefix(name, "lib") && !strings.HasPrefix(name, "libperl") && !strings.HasSuffix(name, "-perl"))
}

// guestProgramFiles returns the binaries (paths below a root, the same in the guest) and every
// shared library they load, directly or through another library, with the dynamic loader,
// read from the extracted packages under roots and keyed by their paths in the guest: the
// loader at the path its ELF header names, libraries in lib/x86_64-linux-gnu by soname (links
// resolved to the file's content). A binary or library no root has is an error naming it.
func guestProgramFiles(roots []string, binaries ...string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var queue []string
	guestPath := map[string]string{}
	for _, b := range binaries {
		bin, err := findInRoots(roots, []string{filepath.Dir(b)}, filepath.Base(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b, err)
		}
		queue = append(queue, bin)
		guestPath[bin] = b
		files[b] = nil
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		files[guestPath[path]] = data
		interp, needed, err := elfDependencies(path)
		if err != nil {
			return nil, err
		}
		if interp != "" {
			name := strings.TrimPrefix(interp, "/")
			if _, seen := files[name]; !seen {
				lib, err := findInRoots(roots, []string{filepath.Dir(name)}, filepath.Base(name))
				if err != nil {
					return nil, fmt.Errorf("the dynamic loader %s: %w", interp, err)
				}
				guestPath[lib] = name
				queue = append(queue, lib)
				files[name] = nil
			}
		}
		for _, soname := range needed {
			name := "lib/x86_64-linux-gnu/" + soname
			if _, seen := files[name]; seen {
				continue
			}
			lib, err := findInRoots(roots, libraryDirs, soname)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", filepath.Base(path), soname, err)
			}
			guestPath[lib] = name
			queue = append(queue, lib)
			files[name] = nil
		}
	}
	return files, nil
}

// elfDependencies reads an ELF file's interpreter (empty for a library) and the sonames it
// needs.
func elfDependencies(path string) (string, []string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	needed, err := f.ImportedLibraries()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", nil, fmt.Errorf("%s: reading its interpreter: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	return interp, needed, nil
}

// findInRoots finds name in one of dirs below one of roots and returns the file it is,
// following links only within that root (a package's soname link names a file beside it).
func findInRoots(roots, dirs []string, name string) (string, error) {
	for _, root := range roots {
		for _, dir := range dirs {
			path := filepath.Join(root, dir, name)
			for range 8 {
				fi, err := os.Lstat(path)
				if err != nil {
					break
				}
				if fi.Mode().IsRegular() {
					return path, nil
				}
				if fi.Mode()&os.ModeSymlink == 0 {
					break
				}
				target, err := os.Readlink(path)
				if err != nil {
					break
				}
				if filepath.IsAbs(target) {
					path = filepath.Join(root, target)
				} else {
					path = filepath.Join(filepath.Dir(path), target)
				}
				if rel, err := filepath.Rel(root, path); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
					break
				}
			}
		}
	}
	return "", fmt.Errorf("no %s in %s of the extracted packages", name, strings.Join(dirs, ", "))
}
