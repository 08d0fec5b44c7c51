// Package capsseed is the node's seed of libvirt's QEMU capabilities cache, part of the
// contract between the node agent and the launchers of its node.
//
// Every launcher runs its own session libvirtd, and a fresh libvirtd probes QEMU's
// capabilities before its first domain: about 2.5 s of CPU alone, 25 CPU-seconds when ten
// launchers start at once on a 2-core node (docs/design.md section 9). The probe's result is a file per
// QEMU binary in libvirt's cache directory. The node agent's Pod probes once, in an init
// container running the launcher image; the node agent copies the files into a root-owned
// directory on the node that launcher Pods mount read-only, and each launcher copies them into
// its daemon's cache before starting libvirtd. libvirt checks each cached file against its
// own and QEMU's binaries, the kernel and the CPU, and probes again when one does not match,
// so a stale seed (QEMU upgraded on the node) costs only the probe it would have cost anyway.
//
// The files are copied only when they have libvirt's cache file names, are regular files
// opened without following a symlink, and are of bounded size.
package capsseed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/sys/unix"
)

// DefaultDir is the node's seed directory: written by the node agent, mounted read-only into
// launcher Pods at the same path.
const DefaultDir = "/var/lib/vireo/capabilities"

// MaxFileSize bounds one capabilities file (libvirt 9's is about 300 KiB).
const MaxFileSize = 8 << 20

// maxFiles bounds how many files a copy takes (one per QEMU binary).
const maxFiles = 16

// fileName matches libvirt's cache file names: the SHA-256 of the emulator's path, in hex.
var fileName = regexp.MustCompile(`^[0-9a-f]{64}\.xml$`)

// Owner is who the copies belong to; nil keeps the caller's.
type Owner struct {
	UID, GID int
}

// Copy copies the capabilities files of directory src into directory dst (created with mode
// 0700 for owner, or 0755 when mode allows others to read) and returns how many it copied. A
// missing src is no seed: 0 and no error. Each file is written under a temporary name and
// renamed, so a reader never sees part of one.
func Copy(src, dst string, mode os.FileMode, owner *Owner) (int, error) {
	srcFD, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("capabilities seed: open %s: %w", src, err)
	}
	dir := os.NewFile(uintptr(srcFD), src)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("capabilities seed: list %s: %w", src, err)
	}
	dirMode := os.FileMode(0o700)
	if mode&0o004 != 0 {
		dirMode = 0o755
	}
	if err := ensureDir(dst, dirMode, owner); err != nil {
		return 0, err
	}
	copied := 0
	for _, name := range names {
		if !fileName.MatchString(name) {
			continue
		}
		if copied == maxFiles {
			return copied, fmt.Errorf("capabilities seed: %s holds more than %d capabilities files", src, maxFiles)
		}
		if err := copyFile(srcFD, name, filepath.Join(dst, name), mode, owner); err != nil {
			return copied, err
		}
		copied++
	}
	return copied, nil
}

// ensureDir creates dir when it is missing and checks that it is a directory, not a link.
func ensureDir(dir string, mode os.FileMode, owner *Owner) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	err := os.Mkdir(dir, mode)
	if err == nil && owner != nil {
		err = os.Lchown(dir, owner.UID, owner.GID)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("capabilities seed: create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("capabilities seed: %s is not a directory", dir)
	}
	return nil
}

// copyFile copies name below the directory srcFD to dst through a temporary file.
func copyFile(srcFD int, name, dst string, mode os.FileMode, owner *Owner) error {
	fd, err := unix.Openat(srcFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("capabilities seed: open %s without following links: %w", name, err)
	}
	in := os.NewFile(uintptr(fd), name)
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return fmt.Errorf("capabilities seed: %s is not a regular file of at most %d bytes", name, MaxFileSize)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".seed-*")
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	_, err = io.Copy(tmp, io.LimitReader(in, MaxFileSize))
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil && owner != nil {
		err = tmp.Chown(owner.UID, owner.GID)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return fmt.Errorf("capabilities seed: write %s: %w", dst, err)
	}
	return nil
}
